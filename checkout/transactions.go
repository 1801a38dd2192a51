package checkout

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/watcher"
)

// TxReports reads a reported transaction from its chain and records its transfers to a deposit
// address as the watcher would (watcher.Reports).
type TxReports interface {
	Record(ctx context.Context, chainID int64, txHash string, depositAddressID uuid.UUID) (watcher.Reported, error)
}

// TxReport is what the chain holds of a transaction the page reported, for its payment.
type TxReport struct {
	watcher.Reported
	ChainID int64
	TxHash  string
	Symbols map[string]string // token id → symbol, for the transfers
}

// ReportTransaction looks up the transaction a customer's wallet sent for a quote of the payment
// on that quote's chain (see watcher.Reports: nothing the page says is trusted beyond the hash to
// look up). A final payment accepts no reports, except one of a transaction already recorded for
// it (the watcher was first).
func (s *Service) ReportTransaction(ctx context.Context, p Payment, quoteID uuid.UUID, txHash string) (TxReport, error) {
	chainID := int64(0)
	for _, q := range p.Quotes {
		if q.ID == quoteID {
			chainID = q.Token.Chain.ID
		}
	}
	if chainID == 0 {
		return TxReport{}, errQuoteNotFound
	}
	out := TxReport{ChainID: chainID, TxHash: strings.ToLower(txHash), Symbols: map[string]string{}}
	if p.Status.Terminal() {
		known, err := s.Store.Read(ctx).TxTransfers(chainID, txHash, p.DepositAddress.ID)
		if err != nil {
			return TxReport{}, err
		}
		if len(known) == 0 {
			return TxReport{}, fmt.Errorf("%w: the payment is %s; its transfers are the watcher's to record", domain.ErrPaymentNotOpen, p.Status)
		}
		n := known[0].BlockNumber
		out.Reported = watcher.Reported{Status: watcher.ReportRecorded, BlockNumber: &n, Transfers: known}
	} else if s.Transactions == nil {
		out.Status = watcher.ReportUnavailable
	} else {
		r, err := s.Transactions.Record(ctx, chainID, txHash, p.DepositAddress.ID)
		if err != nil {
			return TxReport{}, err
		}
		out.Reported = r
	}
	for _, t := range out.Transfers {
		out.Symbols[t.TokenID] = s.Catalog.Tokens[t.TokenID].Symbol
	}
	return out, nil
}
