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

// devnetPayerAccount pays from the checkout page's "Pay with a test wallet" button: a prefunded
// test account the README's walk-through does not use.
const devnetPayerAccount = 5

// devnetPayer pays a devnet quote from a test account, when this process reaches a devnet (it
// runs it, or PAYMENTS_RPC_URLS names one); nil otherwise: the button is not offered.
func (a *App) devnetPayer() checkout.DevnetPayer {
	url := ""
	if a.Devnet != nil {
		url = a.Devnet.URL()
	} else if u := a.Cfg.Chains.RPCURLs[devnet.ChainID]; len(u) > 0 {
		url = u[0]
	}
	if url == "" {
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
		if q == nil || q.Token.Chain.ID != devnet.ChainID {
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
