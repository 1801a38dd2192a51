package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/store"
)

// The dashboard's payment pages: the secret-key API's list and read for the merchant bearer()
// authorised in its token's mode (merchantFrom(ctx) carries both, so the same code answers),
// and a payment's timeline, transfers and webhook deliveries. Another merchant's payment, or
// one of the other mode, is unknown: 404 payment_not_found.

func (h *handlers) ListMerchantPayments(ctx context.Context, req gen.ListMerchantPaymentsRequestObject) (gen.ListMerchantPaymentsResponseObject, error) {
	if _, err := actingAs(ctx); err != nil {
		return nil, err
	}
	p := req.Params
	return h.listPayments(ctx, gen.ListPaymentsParams{Type: p.Type, Status: p.Status, Search: p.Search,
		SortBy: (*gen.ListPaymentsParamsSortBy)(p.SortBy), SortOrder: (*gen.ListPaymentsParamsSortOrder)(p.SortOrder),
		Limit: p.Limit, Offset: p.Offset})
}

func (h *handlers) GetMerchantPayment(ctx context.Context, req gen.GetMerchantPaymentRequestObject) (gen.GetMerchantPaymentResponseObject, error) {
	if _, err := actingAs(ctx); err != nil {
		return nil, err
	}
	r, err := h.getPayment(ctx, req.PaymentId)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// actingPayment is the path's payment id once it is known to be the acting merchant's, of the
// token's mode (one small query).
func (h *handlers) actingPayment(ctx context.Context, paymentID string) (domain.Merchant, uuid.UUID, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return domain.Merchant{}, uuid.Nil, err
	}
	id, _, err := h.payments.Version(ctx, m, paymentID)
	return m, id, err
}

// eventSummary is what the timeline shows of the payment snapshot an event carries.
type eventSummary struct {
	Status         string `json:"status"`
	AmountDueCents int64  `json:"amountDueCents"`
	Received       *struct {
		AmountAsset string `json:"amountAsset"`
	} `json:"received"`
	Receipt *struct {
		TxHash string `json:"txHash"`
	} `json:"receipt"`
	Transfer *struct {
		TxHash string `json:"txHash"`
	} `json:"transfer"`
}

func (h *handlers) ListMerchantPaymentEvents(ctx context.Context, req gen.ListMerchantPaymentEventsRequestObject) (gen.ListMerchantPaymentEventsResponseObject, error) {
	_, id, err := h.actingPayment(ctx, req.PaymentId)
	if err != nil {
		return nil, err
	}
	evs, err := h.payments.Store.Read(ctx).EntityEvents(id)
	if err != nil {
		return nil, err
	}
	out := gen.PaymentEventList{Data: make([]gen.PaymentEvent, 0, len(evs))}
	for _, e := range evs {
		var s eventSummary
		if err := json.Unmarshal(e.Payload, &s); err != nil {
			return nil, err
		}
		ev := gen.PaymentEvent{Id: e.ID, Type: string(e.Type), At: e.CreatedAt, Sequence: e.Sequence}
		ev.Data.Status, ev.Data.AmountDueCents = s.Status, s.AmountDueCents
		if s.Received != nil {
			ev.Data.ReceivedAmountAsset = &s.Received.AmountAsset
		}
		// The transfer an event is about: a late transfer's own, else the settling receipt's.
		switch {
		case s.Transfer != nil:
			ev.Data.TxHash = &s.Transfer.TxHash
		case s.Receipt != nil && s.Receipt.TxHash != "":
			ev.Data.TxHash = &s.Receipt.TxHash
		}
		out.Data = append(out.Data, ev)
	}
	return gen.ListMerchantPaymentEvents200JSONResponse(out), nil
}

// explorerTxURL is the transaction's page on the chain's block explorer ("" when the catalogue
// names none): the catalogue's URL (validated http(s) at load) with /tx/<hash>.
func explorerTxURL(c domain.Chain, txHash string) *string {
	if c.BlockExplorerURL == "" {
		return nil
	}
	u := strings.TrimRight(c.BlockExplorerURL, "/") + "/tx/" + url.PathEscape(txHash)
	return &u
}

func (h *handlers) ListMerchantPaymentTransfers(ctx context.Context, req gen.ListMerchantPaymentTransfersRequestObject) (gen.ListMerchantPaymentTransfersResponseObject, error) {
	_, id, err := h.actingPayment(ctx, req.PaymentId)
	if err != nil {
		return nil, err
	}
	tx := h.payments.Store.Read(ctx)
	ts, err := tx.PaymentTransfers(id)
	if err != nil {
		return nil, err
	}
	heads := map[int64]int64{} // chain → the newest block the watcher processed (-1: none yet)
	out := gen.PaymentTransferList{Data: make([]gen.PaymentTransfer, 0, len(ts))}
	for _, t := range ts {
		c, _ := h.catalog.Chain(t.ChainID) // an unknown chain: no explorer, depth 1
		tok := h.catalog.Tokens[t.TokenID]
		head, ok := heads[t.ChainID]
		if !ok {
			cur, err := tx.Cursor(t.ChainID)
			switch {
			case errors.Is(err, store.ErrNotFound):
				head = -1
			case err != nil:
				return nil, err
			default:
				head = cur.Number
			}
			heads[t.ChainID] = head
		}
		var conf int64
		switch {
		case t.Status == store.TransferOrphaned:
		case head >= t.BlockNumber:
			conf = head - t.BlockNumber + 1
		}
		if t.Status == store.TransferConfirmed {
			conf = max(conf, c.Depth())
		}
		out.Data = append(out.Data, gen.PaymentTransfer{Id: t.ID, ChainId: chains.CAIP2(t.ChainID), TxHash: t.TxHash, LogIndex: t.LogIndex,
			BlockNumber: t.BlockNumber, BlockTime: t.BlockTime, From: t.From, TokenId: t.TokenID, TokenSymbol: tok.Symbol,
			AmountAsset: t.Amount.String(), Amount: t.Amount.Shift(-tok.Decimals).String(), Status: gen.PaymentTransferStatus(t.Status),
			Confirmations: conf, RequiredConfirmations: int32(c.Depth()), Credited: t.Credited,
			ExplorerUrl: explorerTxURL(c, t.TxHash), CreatedAt: t.CreatedAt})
	}
	return gen.ListMerchantPaymentTransfers200JSONResponse(out), nil
}

func (h *handlers) ListMerchantPaymentDeliveries(ctx context.Context, req gen.ListMerchantPaymentDeliveriesRequestObject) (gen.ListMerchantPaymentDeliveriesResponseObject, error) {
	m, id, err := h.actingPayment(ctx, req.PaymentId)
	if err != nil {
		return nil, err
	}
	f := store.DeliveryFilter{MerchantID: m.ID, Mode: &m.Mode, EntityID: &id, Limit: 50}
	if req.Params.Limit != nil {
		f.Limit = int(*req.Params.Limit)
	}
	ds, err := h.webhooks.Deliveries(ctx, f)
	if err != nil {
		return nil, err
	}
	return gen.ListMerchantPaymentDeliveries200JSONResponse(deliveriesOut(ds)), nil
}
