package app

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
)

// walletRPC is the RPC URL of each devnet chain this process reaches: a customer's wallet may be
// given it to add the chain (no other chain's: a provider's URL may carry its API key).
func (a *App) walletRPC() map[int64]string {
	out := map[int64]string{}
	for _, id := range devnet.ChainIDs() {
		if u := a.devnetURL(id); u != "" {
			out[id] = u
		}
	}
	return out
}

// gaslessChains are the chains whose EIP-3009 quotes the checkout offers to pay without gas: those
// this process relays on (a payout manager with a hot wallet, whose round submits the customers'
// signed transfers). An API-only process relays on none.
func (a *App) gaslessChains() map[int64]checkout.GaslessChain {
	out := map[int64]checkout.GaslessChain{}
	for _, m := range a.Payouts {
		if m.Wallet != nil && a.Clients[m.Info.ID] != nil {
			out[m.Info.ID] = a.Clients[m.Info.ID]
		}
	}
	return out
}

// devnetPayerAccount pays from the checkout page's "Pay with a test wallet" button: a prefunded
// test account the README's walk-through does not use.
const devnetPayerAccount = 5

// devnetPayer pays a devnet quote from a test account, on the quote's devnet chain, when this
// process reaches a devnet chain (it runs it, or PAYMENTS_RPC_URLS names one); nil otherwise: the
// button is not offered.
func (a *App) devnetPayer() checkout.DevnetPayer {
	reached := false
	for _, id := range devnet.ChainIDs() {
		reached = reached || a.devnetURL(id) != ""
	}
	if !reached {
		return nil
	}
	return func(ctx context.Context, p checkout.Payment, quoteID uuid.UUID) (string, error) {
		if p.Mode.Live() {
			// Free devnet money never pays a live payment (which has no devnet quote anyway).
			return "", domain.Invalid(domain.CodeParameterInvalid, "quoteId", "the test wallet pays only test-mode payments")
		}
		var q *domain.Quote
		for _, x := range payments.Present(p, Now()).Quotes {
			if x.ID == quoteID {
				q = &x
			}
		}
		url := ""
		if q != nil {
			url = a.devnetURL(q.Token.Chain.ID)
		}
		if url == "" {
			return "", domain.Invalid(domain.CodeParameterInvalid, "quoteId", "not a devnet quote of this payment")
		}
		if q.Status != domain.QuoteActive || p.Status != domain.PaymentPending {
			return "", fmt.Errorf("%w: the quote is %s", domain.ErrQuoteNotActive, q.Status)
		}
		eth, err := ethclient.DialContext(ctx, url)
		if err != nil {
			return "", err
		}
		defer eth.Close()
		key, err := devnet.AccountKey(devnetPayerAccount)
		if err != nil {
			return "", err
		}
		token := ""
		if q.Token.AssetType == domain.ERC20 {
			token = q.Token.ContractAddress
		}
		h, err := devnet.Pay(ctx, eth, key, token, common.HexToAddress(p.DepositAddress.Address), q.ExpectedAmountAsset.BigInt())
		if err != nil {
			return "", err
		}
		a.Log.Info("devnet test wallet paid a checkout quote", "payment", p.ID, "quote", q.ID, "tx", h.Hex())
		return h.Hex(), nil
	}
}
