package server

import (
	"context"

	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/watcher"
)

// ReportCheckoutTransaction: the page reports the hash of the transaction its customer's wallet
// sent; the server reads it from the chain (checkout.Service.ReportTransaction). Mined: 200;
// not mined or not readable now: 202, and the watcher records it once mined.
func (h *handlers) ReportCheckoutTransaction(ctx context.Context, req gen.ReportCheckoutTransactionRequestObject) (gen.ReportCheckoutTransactionResponseObject, error) {
	r, err := h.checkout.ReportTransaction(ctx, checkoutPayment(ctx), req.Body.QuoteId, req.Body.TxHash)
	if err != nil {
		return nil, err
	}
	out := gen.TransactionReport{TxHash: r.TxHash, EvmChainId: r.ChainID, Status: gen.TransactionReportStatus(r.Status),
		BlockNumber: r.BlockNumber, Transfers: []gen.ReportedTransfer{}}
	for _, t := range r.Transfers {
		out.Transfers = append(out.Transfers, gen.ReportedTransfer{LogIndex: t.LogIndex, TokenSymbol: r.Symbols[t.TokenID],
			AmountAsset: t.Amount.String(), Status: gen.ReportedTransferStatus(t.Status)})
	}
	if r.Status == watcher.ReportPending || r.Status == watcher.ReportUnavailable {
		return gen.ReportCheckoutTransaction202JSONResponse(out), nil
	}
	return gen.ReportCheckoutTransaction200JSONResponse(out), nil
}

// walletNetworks renders the chains a wallet may be asked to add.
func walletNetworks(ns []checkout.WalletNetwork) *[]gen.WalletNetwork {
	out := make([]gen.WalletNetwork, 0, len(ns))
	for _, n := range ns {
		w := gen.WalletNetwork{EvmChainId: n.ChainID, ChainName: n.Name, NativeSymbol: n.NativeSymbol, NativeDecimals: n.NativeDecimals,
			RpcUrls: []string{n.RPCURL}}
		if n.BlockExplorerURL != "" {
			u := n.BlockExplorerURL
			w.BlockExplorerUrl = &u
		}
		out = append(out, w)
	}
	return &out
}
