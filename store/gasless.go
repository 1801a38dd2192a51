package store

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/domain"
)

// Payments made without gas (issue 24): a customer's signed EIP-3009 transfer to a deposit
// address, accepted by the checkout once every check passed, then relayed by the chain's hot
// wallet through the transaction manager (submitted with the signed transaction it is stored
// with), and final once that transaction's receipt is at the chain's depth.

// GaslessStatus is where a signed transfer is.
type GaslessStatus string

// Gasless authorization states: accepted (checked, waiting for the relayer), submitted (the relay
// transaction is signed and stored: it goes out exactly once), relayed (its receipt succeeded at
// the chain's depth), failed (never sent, or reverted: Error says why; the payment stays payable
// the normal way).
const (
	GaslessAccepted  GaslessStatus = "accepted"
	GaslessSubmitted GaslessStatus = "submitted"
	GaslessRelayed   GaslessStatus = "relayed"
	GaslessFailed    GaslessStatus = "failed"
)

// GaslessAuthorization is a customer's signed transferWithAuthorization for a payment's quote.
type GaslessAuthorization struct {
	ID          uuid.UUID
	PaymentID   uuid.UUID
	QuoteID     uuid.UUID
	ChainID     int64
	TokenID     string
	From        string // the signer (lowercase)
	To          string // the deposit address (lowercase)
	Value       decimal.Decimal
	ValidAfter  int64
	ValidBefore int64
	Nonce       string // 0x + 64 hex, lowercase
	Signature   string // 0x + r ‖ s ‖ v (65 bytes, v 27 or 28)
	FeePaidBy   domain.GaslessFeePayer
	FeeCents    int64           // the relay fee in value (the buyer's; 0 when the merchant bears the gas)
	FeeAsset    decimal.Decimal // the same in the token's smallest unit
	Status      GaslessStatus
	OutgoingTx  *uuid.UUID // the relay transaction, once signed
	TxHash      *string    // its first attempt's hash (a fee bump makes others: any may be mined)
	Error       *string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

type gaslessRow struct {
	ID           uuid.UUID `gorm:"primaryKey"`
	PaymentID    uuid.UUID
	QuoteID      uuid.UUID
	ChainID      int64
	TokenID      string
	FromAddress  string
	ToAddress    string
	Value        decimal.Decimal
	ValidAfter   int64
	ValidBefore  int64
	Nonce        string
	Signature    string
	FeePaidBy    string
	FeeCents     int64
	FeeAsset     decimal.Decimal
	Status       string
	OutgoingTxID *uuid.UUID
	TxHash       *string
	Error        *string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (gaslessRow) TableName() string { return "gasless_authorizations" }

func (r gaslessRow) domain() GaslessAuthorization {
	return GaslessAuthorization{ID: r.ID, PaymentID: r.PaymentID, QuoteID: r.QuoteID, ChainID: r.ChainID, TokenID: r.TokenID,
		From: r.FromAddress, To: r.ToAddress, Value: r.Value, ValidAfter: r.ValidAfter, ValidBefore: r.ValidBefore, Nonce: r.Nonce,
		Signature: r.Signature, FeePaidBy: domain.GaslessFeePayer(r.FeePaidBy), FeeCents: r.FeeCents, FeeAsset: r.FeeAsset,
		Status: GaslessStatus(r.Status), OutgoingTx: r.OutgoingTxID, TxHash: r.TxHash, Error: r.Error,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
}

// InsertGasless stores an accepted authorization (inside InTx). ErrConflict: the signer's nonce
// for this token is stored already (the same authorization posted twice, or a replay).
// domain.ErrGaslessInProgress: the payment has another authorization accepted or submitted
// (index gasless_authorizations_in_flight_idx, migration 27: one in flight per payment).
func (t *Tx) InsertGasless(g GaslessAuthorization) error {
	now := g.CreatedAt.UTC()
	row := &gaslessRow{ID: g.ID, PaymentID: g.PaymentID, QuoteID: g.QuoteID, ChainID: g.ChainID,
		TokenID: g.TokenID, FromAddress: strings.ToLower(g.From), ToAddress: strings.ToLower(g.To), Value: g.Value,
		ValidAfter: g.ValidAfter, ValidBefore: g.ValidBefore, Nonce: strings.ToLower(g.Nonce), Signature: strings.ToLower(g.Signature),
		FeePaidBy: string(g.FeePaidBy), FeeCents: g.FeeCents, FeeAsset: g.FeeAsset, Status: string(GaslessAccepted),
		CreatedAt: now, UpdatedAt: now}
	// Neither driver says which unique rule a violation broke (SQLite's names only columns), so
	// the insert runs under a savepoint and, when refused, the rows are asked: PostgreSQL keeps
	// no transaction usable after a failed statement, a savepoint rolled back to does.
	const sp = "gasless_insert"
	if err := t.db.SavePoint(sp).Error; err != nil {
		return translate(err)
	}
	err := translate(t.db.Create(row).Error)
	if !errors.Is(err, ErrConflict) {
		return err
	}
	if rb := t.db.RollbackTo(sp).Error; rb != nil {
		return translate(rb)
	}
	var n int64
	if e := t.db.Model(&gaslessRow{}).Where("token_id = ? AND from_address = ? AND nonce = ?", row.TokenID, row.FromAddress,
		row.Nonce).Count(&n).Error; e != nil {
		return translate(e)
	}
	if n > 0 {
		return err
	}
	if e := t.db.Model(&gaslessRow{}).Where("payment_id = ? AND status IN ?", g.PaymentID, gaslessInFlight).Count(&n).Error; e != nil {
		return translate(e)
	}
	if n > 0 {
		return fmt.Errorf("%w: another signed payment for this payment is accepted or being relayed", domain.ErrGaslessInProgress)
	}
	return err
}

// gaslessInFlight are the states in which an authorization may still move the payer's tokens.
var gaslessInFlight = []GaslessStatus{GaslessAccepted, GaslessSubmitted}

// GaslessByNonce reads the authorization stored for a signer's nonce of a token.
func (t *Tx) GaslessByNonce(tokenID, from, nonce string) (GaslessAuthorization, error) {
	var r gaslessRow
	err := t.db.Take(&r, "token_id = ? AND from_address = ? AND nonce = ?", tokenID, strings.ToLower(from), strings.ToLower(nonce)).Error
	return r.domain(), translate(err)
}

// GaslessByOutgoing reads the authorization a relay transaction carries (ErrNotFound: the
// transaction relays none).
func (t *Tx) GaslessByOutgoing(outgoingID uuid.UUID) (GaslessAuthorization, error) {
	var r gaslessRow
	err := t.db.Take(&r, "outgoing_tx_id = ?", outgoingID).Error
	return r.domain(), translate(err)
}

// PaymentGasless lists a payment's authorizations, newest first.
func (t *Tx) PaymentGasless(paymentID uuid.UUID) ([]GaslessAuthorization, error) {
	var rows []gaslessRow
	if err := t.db.Where("payment_id = ?", paymentID).Order("created_at DESC, id DESC").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]GaslessAuthorization, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// AcceptedGasless lists a chain's authorizations waiting for the relayer, oldest first.
func (t *Tx) AcceptedGasless(chainID int64, limit int) ([]GaslessAuthorization, error) {
	var rows []gaslessRow
	if err := t.db.Where("chain_id = ? AND status = ?", chainID, GaslessAccepted).Order("created_at, id").Limit(limit).
		Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	out := make([]GaslessAuthorization, len(rows))
	for i, r := range rows {
		out[i] = r.domain()
	}
	return out, nil
}

// SignerGasless is one of a signer's authorizations that may still move its tokens.
type SignerGasless struct {
	GaslessAuthorization
	RelayMined bool // its relay transaction is in a block: the signer's balance on chain shows it
}

// SignerGaslessInFlight lists a signer's authorizations of a token that are accepted or
// submitted (on any payment), oldest first: what the chain's balance of from may not show yet.
func (t *Tx) SignerGaslessInFlight(tokenID, from string) ([]SignerGasless, error) {
	var rows []gaslessRow
	if err := t.db.Where("token_id = ? AND from_address = ? AND status IN ?", tokenID, strings.ToLower(from), gaslessInFlight).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	var relays []uuid.UUID
	for _, r := range rows {
		if r.OutgoingTxID != nil {
			relays = append(relays, *r.OutgoingTxID)
		}
	}
	mined := map[uuid.UUID]bool{}
	if len(relays) > 0 {
		var txs []outgoingTxRow
		if err := t.db.Select("id").Where("id IN ? AND status IN ?", relays, []OutgoingStatus{OutgoingMined, OutgoingConfirmed}).
			Find(&txs).Error; err != nil {
			return nil, translate(err)
		}
		for _, o := range txs {
			mined[o.ID] = true
		}
	}
	out := make([]SignerGasless, len(rows))
	for i, r := range rows {
		out[i] = SignerGasless{GaslessAuthorization: r.domain(), RelayMined: r.OutgoingTxID != nil && mined[*r.OutgoingTxID]}
	}
	return out, nil
}

// GaslessRelay is an authorization and the hash of its relay transaction's attempt that is one
// of the hashes asked about.
type GaslessRelay struct {
	GaslessAuthorization
	MinedHash string
}

// RelayedGaslessByTx lists a payment's authorizations whose relay transaction is one of hashes
// (any attempt of it: a fee bump signs another hash) and did not fail, oldest first.
func (t *Tx) RelayedGaslessByTx(paymentID uuid.UUID, hashes []string) ([]GaslessRelay, error) {
	if len(hashes) == 0 {
		return nil, nil
	}
	lower := make([]string, len(hashes))
	for i, h := range hashes {
		lower[i] = strings.ToLower(h)
	}
	var atts []txAttemptRow
	if err := t.db.Select("outgoing_tx_id", "hash").Where("hash IN ?", lower).Find(&atts).Error; err != nil {
		return nil, translate(err)
	}
	if len(atts) == 0 {
		return nil, nil
	}
	hashOf := map[uuid.UUID]string{}
	ids := make([]uuid.UUID, 0, len(atts))
	for _, a := range atts {
		hashOf[a.OutgoingTxID] = a.Hash
		ids = append(ids, a.OutgoingTxID)
	}
	var rows []gaslessRow
	err := t.db.Where("payment_id = ? AND status IN ? AND outgoing_tx_id IN ?", paymentID,
		[]GaslessStatus{GaslessSubmitted, GaslessRelayed}, ids).Order("created_at, id").Find(&rows).Error
	if err != nil {
		return nil, translate(err)
	}
	out := make([]GaslessRelay, len(rows))
	for i, r := range rows {
		out[i] = GaslessRelay{GaslessAuthorization: r.domain(), MinedHash: hashOf[*r.OutgoingTxID]}
	}
	return out, nil
}

// SubmitGasless records that an accepted authorization's relay transaction is signed and stored
// (in the database transaction that stores it). ErrConflict: it is no longer accepted (another
// relayer took it, or it failed meanwhile).
func (t *Tx) SubmitGasless(id, outgoingID uuid.UUID, txHash string, now time.Time) error {
	res := t.db.Model(&gaslessRow{}).Where("id = ? AND status = ?", id, GaslessAccepted).Updates(map[string]any{
		"status": GaslessSubmitted, "outgoing_tx_id": outgoingID, "tx_hash": strings.ToLower(txHash), "updated_at": now.UTC()})
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrConflict
	}
	return nil
}

// FinishGasless moves an authorization from one of from to relayed or failed (why), with the
// mined hash when there is one. ErrConflict: it was in none of from.
func (t *Tx) FinishGasless(id uuid.UUID, from []GaslessStatus, to GaslessStatus, txHash *string, why *string, now time.Time) error {
	set := map[string]any{"status": to, "error": why, "updated_at": now.UTC()}
	if txHash != nil {
		set["tx_hash"] = strings.ToLower(*txHash)
	}
	res := t.db.Model(&gaslessRow{}).Where("id = ? AND status IN ?", id, from).Updates(set)
	if res.Error != nil {
		return translate(res.Error)
	}
	if res.RowsAffected == 0 {
		return ErrConflict
	}
	return nil
}
