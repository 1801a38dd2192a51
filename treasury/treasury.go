// Package treasury reports where the gateway's money is: what merchants are owed (the ledger),
// what the hot wallet holds on chain per token, what deposit addresses still hold (unswept) and
// what has been swept — so an operator can check that assets cover liabilities.
package treasury

import (
	"context"
	"fmt"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/store"
)

// Chain is what the report reads of a chain: balances.
type Chain interface {
	ethereum.ContractCaller
	BalanceAt(ctx context.Context, addr common.Address, block *big.Int) (*big.Int, error)
}

// MaxAddresses bounds the deposit addresses whose balances are read per token.
const MaxAddresses = 500

// Report is the treasury at one moment, each mode on its own: live money is owed and held on
// mainnets, test money on testnets and the devnet, and neither covers the other.
type Report struct {
	Merchants []Merchant  `json:"merchants"` // one line per merchant and mode
	Live      Totals      `json:"live"`
	Test      Totals      `json:"test"`
	Chains    []ChainLine `json:"chains"`
}

// Totals are one mode's figures.
type Totals struct {
	AvailableCents     int64  `json:"availableCents"`     // owed to merchants, withdrawable
	PendingPayoutCents int64  `json:"pendingPayoutCents"` // debited, being paid out
	LiabilitiesCents   int64  `json:"liabilitiesCents"`   // the two together
	AssetsUSD          string `json:"assetsUsd"`          // hot wallets and unswept, on this mode's chains, at current prices
}

// Merchant is one merchant's money of one mode by the ledger.
type Merchant struct {
	ID                 uuid.UUID   `json:"id"`
	Name               string      `json:"name"`
	Mode               domain.Mode `json:"mode"`
	AvailableCents     int64       `json:"availableCents"`
	PendingPayoutCents int64       `json:"pendingPayoutCents"`
}

// totals is the Totals of a mode.
func (r *Report) totals(m domain.Mode) *Totals {
	if m.Live() {
		return &r.Live
	}
	return &r.Test
}

// ChainLine is one chain's wallets.
type ChainLine struct {
	Chain     string      `json:"chain"` // CAIP-2
	Mode      domain.Mode `json:"mode"`
	Name      string      `json:"name"`
	HotWallet string      `json:"hotWallet,omitempty"`
	Error     string      `json:"error,omitempty"` // the chain could not be read: on-chain figures are missing
	Tokens    []TokenLine `json:"tokens"`
}

// TokenLine is one token's figures on a chain, in its smallest unit (decimal strings).
type TokenLine struct {
	Token            string `json:"token"`
	Decimals         int32  `json:"decimals"`
	HotWallet        string `json:"hotWallet,omitempty"`      // the hot wallet's balance, on chain
	SignedNotMined   string `json:"signedNotMined"`           // payouts signed, not yet mined: they will leave the hot wallet
	UnsweptRecorded  string `json:"unsweptRecorded"`          // confirmed transfers no finished sweep covers
	UnsweptOnChain   string `json:"unsweptOnChain,omitempty"` // what those deposit addresses hold, on chain
	UnsweptAddresses int    `json:"unsweptAddresses"`
	Swept            string `json:"swept"`              // moved to the hot wallet by confirmed sweeps
	ValueUSD         string `json:"valueUsd,omitempty"` // hot wallet less signed payouts, plus unswept on chain
}

// Build reads the ledger and, for each chain with a client, the chain's balances. hot gives a
// chain's hot wallet address ("" when it has none).
func Build(ctx context.Context, st *store.Store, cat domain.Catalog, prices pricing.Source, clients map[int64]Chain,
	dialErrs map[int64]error, hot func(chainID int64) string) (Report, error) {
	var r Report
	ms, err := st.Read(ctx).MerchantTreasuries()
	if err != nil {
		return r, err
	}
	for _, m := range ms {
		r.Merchants = append(r.Merchants, Merchant{ID: m.ID, Name: m.Name, Mode: m.Mode, AvailableCents: m.AvailableCents, PendingPayoutCents: m.PendingPayoutCents})
		t := r.totals(m.Mode)
		t.AvailableCents += m.AvailableCents
		t.PendingPayoutCents += m.PendingPayoutCents
	}
	assets := map[domain.Mode]decimal.Decimal{}
	for _, c := range cat.Chains {
		if !c.Enabled {
			continue
		}
		line, usd, err := chainLine(ctx, st, cat, prices, c, clients[c.ID], dialErrs[c.ID], hot(c.ID))
		if err != nil {
			return r, err
		}
		assets[line.Mode] = assets[line.Mode].Add(usd)
		r.Chains = append(r.Chains, line)
	}
	for _, m := range []domain.Mode{domain.ModeLive, domain.ModeTest} {
		t := r.totals(m)
		t.LiabilitiesCents = t.AvailableCents + t.PendingPayoutCents
		t.AssetsUSD = money.USDDown(assets[m]).StringFixed(2)
	}
	return r, nil
}

func chainLine(ctx context.Context, st *store.Store, cat domain.Catalog, prices pricing.Source, c domain.Chain, cl Chain,
	dialErr error, hot string) (ChainLine, decimal.Decimal, error) {
	line := ChainLine{Chain: chains.CAIP2(c.ID), Mode: domain.ChainMode(c), Name: c.Name, HotWallet: hot}
	if dialErr != nil {
		line.Error = dialErr.Error()
	} else if cl == nil {
		line.Error = "no RPC URL for this chain in this process (PAYMENTS_RPC_URLS)"
	}
	swept, err := st.Read(ctx).SweptTotals(c.ID)
	if err != nil {
		return line, decimal.Zero, err
	}
	unswept, err := st.Read(ctx).UnsweptTotals(c.ID)
	if err != nil {
		return line, decimal.Zero, err
	}
	total := decimal.Zero
	for _, t := range cat.AcceptedTokens(c.ID) {
		tl := TokenLine{Token: t.Symbol, Decimals: t.Decimals, Swept: swept[t.ID].String(), UnsweptRecorded: "0"}
		var u store.Unswept
		if x := unswept[t.ID]; x != nil {
			u = *x
		}
		tl.UnsweptRecorded, tl.UnsweptAddresses = u.Amount.String(), len(u.Addresses)
		signed := decimal.Zero
		if hot != "" {
			if signed, err = st.Read(ctx).UnminedOutflow(c.ID, hot, t.ID); err != nil {
				return line, decimal.Zero, err
			}
		}
		tl.SignedNotMined = signed.String()
		if line.Error == "" {
			value, err := onChain(ctx, cl, t, hot, u.Addresses, &tl, signed)
			if err != nil {
				line.Error = err.Error()
			} else if p, err := prices.PriceUSD(ctx, pricing.Asset{Symbol: t.Symbol, MarketAPIID: t.MarketAPIID,
				Stablecoin: t.Type == domain.Stablecoin}); err == nil {
				usd := money.ValueUSD(value, t.Decimals, p)
				tl.ValueUSD = money.USDDown(usd).StringFixed(2)
				total = total.Add(usd)
			}
		}
		line.Tokens = append(line.Tokens, tl)
	}
	return line, total, nil
}

// onChain fills in the chain's balances of a token and returns what the gateway holds of it:
// the hot wallet less its signed payouts, plus the deposit addresses' unswept balances.
func onChain(ctx context.Context, cl Chain, t domain.Token, hot string, addresses []string, tl *TokenLine, signed decimal.Decimal) (decimal.Decimal, error) {
	balance := func(addr string) (decimal.Decimal, error) {
		var b *big.Int
		var err error
		if t.AssetType == domain.Native {
			b, err = cl.BalanceAt(ctx, common.HexToAddress(addr), nil)
		} else {
			b, err = chain.ERC20Balance(ctx, cl, common.HexToAddress(t.ContractAddress), common.HexToAddress(addr))
		}
		if err != nil {
			return decimal.Zero, fmt.Errorf("%s balance of %s: %w", t.Symbol, addr, err)
		}
		return decimal.NewFromBigInt(b, 0), nil
	}
	held := decimal.Zero
	if hot != "" {
		b, err := balance(hot)
		if err != nil {
			return held, err
		}
		tl.HotWallet = b.String()
		held = b.Sub(signed)
	}
	sort.Strings(addresses)
	if len(addresses) > MaxAddresses {
		addresses = addresses[:MaxAddresses]
	}
	unswept := decimal.Zero
	for _, a := range addresses {
		b, err := balance(a)
		if err != nil {
			return held, err
		}
		unswept = unswept.Add(b)
	}
	tl.UnsweptOnChain = unswept.String()
	return held.Add(unswept), nil
}

// Units formats an amount in a token's smallest unit (a decimal string) as whole tokens;
// anything else is shown as it is.
func Units(smallest string, decimals int32) string {
	d, err := decimal.NewFromString(smallest)
	if err != nil {
		return smallest
	}
	return money.WholeTokens(d, decimals)
}
