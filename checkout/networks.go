package checkout

import "sort"

// WalletNetwork is a chain as a browser wallet adds it (wallet_addEthereumChain).
type WalletNetwork struct {
	ChainID          int64
	Name             string
	NativeSymbol     string
	NativeDecimals   int32
	RPCURL           string
	BlockExplorerURL string
}

// walletNetworks lists the chains of the view's quotes that have an RPC URL a customer's wallet
// may be given (Service.WalletRPC: the devnets; a provider URL with its API key never is).
func (s *Service) walletNetworks(v View) []WalletNetwork {
	seen := map[int64]bool{}
	var out []WalletNetwork
	for _, q := range v.Quotes {
		c := q.Token.Chain
		u := s.WalletRPC[c.ID]
		if u == "" || seen[c.ID] {
			continue
		}
		seen[c.ID] = true
		out = append(out, WalletNetwork{ChainID: c.ID, Name: c.Name, NativeSymbol: c.NativeSymbol, NativeDecimals: c.NativeDecimals,
			RPCURL: u, BlockExplorerURL: c.BlockExplorerURL})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ChainID < out[j].ChainID })
	return out
}
