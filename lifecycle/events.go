package lifecycle

import (
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
)

// newEventID is evt_ and a UUIDv7 in hex: unique, and ordered by creation time.
func newEventID() string {
	id := uuid.Must(uuid.NewV7())
	return "evt_" + hex.EncodeToString(id[:])
}

// The payload snapshots: what the entity looked like right after the change, in the API's
// field names, so a webhook can be built from the event alone. Cents are integers and token
// amounts integer strings, as on the wire.

type quoteSnapshot struct {
	ID                  string `json:"id"`
	TokenID             string `json:"tokenId"`
	ChainID             string `json:"chainId"`
	Status              string `json:"status"`
	ExpectedAmountAsset string `json:"expectedAmountAsset"`
	AmountDueCents      *int64 `json:"amountDueCents"`
	ExpiresAt           string `json:"expiresAt"`
}

type receiptSnapshot struct {
	QuoteID            string              `json:"quoteId"`
	TokenID            string              `json:"tokenId"`
	SettledAmountAsset string              `json:"settledAmountAsset"`
	SettledAmountUsd   string              `json:"settledAmountUsd"`
	TxHash             *string             `json:"txHash"`
	ProcessedBy        *domain.ProcessedBy `json:"processedBy"`
}

type receivedSnap struct {
	QuoteID        string `json:"quoteId"`
	AmountAsset    string `json:"amountAsset"`
	ConfirmedAsset string `json:"confirmedAmountAsset"`
}

// TransferNote describes a transfer credited on its own (payment.late_transfer).
type TransferNote struct {
	ChainID     string `json:"chainId"`
	TxHash      string `json:"txHash"`
	LogIndex    int64  `json:"logIndex"`
	TokenID     string `json:"tokenId"`
	AmountAsset string `json:"amountAsset"`
	CreditCents int64  `json:"creditedCents"`
	Livemode    bool   `json:"livemode"` // the mode the credit was booked in: its chain's
	Reason      string `json:"reason"`
}

type paymentSnapshot struct {
	ID                     string           `json:"id"`
	MerchantID             string           `json:"merchantId"`
	Type                   string           `json:"type"`
	Status                 string           `json:"status"`
	PreviousStatus         *string          `json:"previousStatus"`
	AmountInCents          int64            `json:"amountInCents"`
	AmountDueCents         int64            `json:"amountDueCents"`
	ConvenienceFeeCents    *int64           `json:"convenienceFeeCents"`
	MerchantFeeCents       *int64           `json:"merchantFeeCents"`
	SwapFeeCents           *int64           `json:"swapFeeCents"`
	AmountMerchantNetCents int64            `json:"amountMerchantNetCents"`
	AmountRefundedCents    int64            `json:"amountRefundedCents"`
	Currency               string           `json:"currency"`
	OrderID                *string          `json:"orderId"`
	DepositAddress         string           `json:"depositAddress"`
	Quotes                 []quoteSnapshot  `json:"quotes"`
	Receipt                *receiptSnapshot `json:"receipt"`
	Received               *receivedSnap    `json:"received"`
	Transfer               *TransferNote    `json:"transfer,omitempty"` // the transfer a payment.late_transfer credits
	ExpiresAt              string           `json:"expiresAt"`
	CreatedAt              string           `json:"createdAt"`
	UpdatedAt              string           `json:"updatedAt"`
	Version                int64            `json:"version"`
}

type withdrawalSnapshot struct {
	ID               string  `json:"id"`
	MerchantID       string  `json:"merchantId"`
	Status           string  `json:"status"`
	PreviousStatus   *string `json:"previousStatus"`
	AmountInCents    int64   `json:"amountInCents"`
	ChainID          string  `json:"chainId"`
	TokenID          string  `json:"tokenId"`
	RecipientAddress string  `json:"recipientAddress"`
	Currency         string  `json:"currency"`
	OrderID          *string `json:"orderId"`
	ErrorMessage     *string `json:"errorMessage"`
	TxHash           *string `json:"txHash"`
	CreatedAt        string  `json:"createdAt"`
	UpdatedAt        string  `json:"updatedAt"`
	Version          int64   `json:"version"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func previous[S ~string](s S) *string {
	if s == "" {
		return nil
	}
	v := string(s)
	return &v
}

func (c *Core) paymentEvent(typ domain.EventType, prev domain.PaymentStatus, p domain.Payment) domain.Event {
	snap := paymentSnapshot{ID: p.ID.String(), MerchantID: p.Merchant.ID.String(), Type: string(p.Type), Status: string(p.Status),
		PreviousStatus: previous(prev), AmountInCents: p.AmountInCents, AmountDueCents: p.AmountDueCents,
		ConvenienceFeeCents: p.ConvenienceFeeCents, MerchantFeeCents: p.MerchantFeeCents, SwapFeeCents: p.SwapFeeCents,
		AmountMerchantNetCents: p.AmountMerchantNetCents, AmountRefundedCents: p.AmountRefundedCents, Currency: p.Currency, OrderID: p.OrderID,
		DepositAddress: p.DepositAddress.Address, Quotes: make([]quoteSnapshot, len(p.Quotes)),
		ExpiresAt: stamp(p.ExpiresAt), CreatedAt: stamp(p.CreatedAt), UpdatedAt: stamp(p.UpdatedAt), Version: p.Version}
	for i, q := range p.Quotes {
		snap.Quotes[i] = quoteSnapshot{ID: q.ID.String(), TokenID: q.Token.ID, ChainID: chains.CAIP2(q.Token.Chain.ID),
			Status: string(q.Status), ExpectedAmountAsset: q.ExpectedAmountAsset.String(), AmountDueCents: q.AmountDueCents,
			ExpiresAt: stamp(q.ExpiresAt)}
	}
	if r := p.Received; r != nil {
		snap.Received = &receivedSnap{QuoteID: r.QuoteID.String(), AmountAsset: r.Amount.String(), ConfirmedAsset: r.Confirmed.String()}
	}
	if r := p.Receipt; r != nil {
		snap.Receipt = &receiptSnapshot{QuoteID: r.QuoteID.String(), TokenID: r.Token.ID,
			SettledAmountAsset: r.SettledAmountAsset.String(), SettledAmountUsd: r.SettledAmountUSD.StringFixed(2),
			TxHash: r.TxHash, ProcessedBy: r.ProcessedBy}
	}
	e := c.event(typ, domain.EntityPayment, p.ID, p.Merchant.ID, p.Version, snap)
	e.Mode = p.Mode.Norm()
	if c.Render != nil && domain.IsWebhookEvent(typ) {
		e.Render = func() ([]byte, error) { return c.Render.Payment(p) }
	}
	return e
}

func (c *Core) withdrawalEvent(typ domain.EventType, prev domain.WithdrawalStatus, w domain.Withdrawal) domain.Event {
	snap := withdrawalSnapshot{ID: w.ID.String(), MerchantID: w.MerchantID.String(), Status: string(w.Status),
		PreviousStatus: previous(prev), AmountInCents: w.AmountInCents, ChainID: chains.CAIP2(w.Chain.ID), TokenID: w.Token.ID,
		RecipientAddress: w.RecipientAddress, Currency: w.Currency, OrderID: w.OrderID, ErrorMessage: w.ErrorMessage,
		CreatedAt: stamp(w.CreatedAt), UpdatedAt: stamp(w.UpdatedAt), Version: w.Version}
	if w.Receipt != nil {
		h := w.Receipt.TxHash
		snap.TxHash = &h
	}
	e := c.event(typ, domain.EntityWithdrawal, w.ID, w.MerchantID, w.Version, snap)
	e.Mode = w.Mode.Norm()
	if c.Render != nil && domain.IsWebhookEvent(typ) {
		e.Render = func() ([]byte, error) { return c.Render.Withdrawal(w) }
	}
	return e
}

func (c *Core) event(typ domain.EventType, entity domain.EntityKind, id, merchant uuid.UUID, seq int64, snap any) domain.Event {
	payload, err := json.Marshal(snap)
	if err != nil {
		// The snapshots are plain structs of strings and integers: this cannot fail.
		panic("lifecycle: marshal event payload: " + err.Error())
	}
	return domain.Event{ID: newEventID(), Type: typ, Entity: entity, EntityID: id, MerchantID: merchant,
		Sequence: seq, Payload: payload, CreatedAt: c.Now()}
}

// withTransfer adds the credited transfer to a payment snapshot.
func withTransfer(payload []byte, note TransferNote) ([]byte, error) {
	var snap paymentSnapshot
	if err := json.Unmarshal(payload, &snap); err != nil {
		return nil, err
	}
	snap.Transfer = &note
	return json.Marshal(snap)
}
