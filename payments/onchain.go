package payments

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/money"
	"github.com/paymentsd/paymentsd/pricing"
	"github.com/paymentsd/paymentsd/risk"
	"github.com/paymentsd/paymentsd/store"
)

// The settlement rules on chain (DESIGN §7, §10). The watcher records transfers and their
// confirmations; these functions turn them into payment states, always through the lifecycle
// core. They are reconcilers: each call reads the transfers as they are now and moves the
// payment to where they say it belongs, so a call that crashed is finished by the next.
//
//   - A transfer counts for a payment when it is in the canonical chain and its block's time is
//     not after the payment's expiry ("timely"). Later ones are recorded and credited on their
//     own (payment.late_transfer), never dropped.
//   - The payment settles on the quote of the token that brought the most value (the one it
//     already settles on, while that still holds transfers).
//   - pending → processing when a counted transfer is seen; processing → pending when a reorg
//     removed every counted transfer; → completed when the confirmed total reaches the quote's
//     expected amount (a deposit: when what arrived is confirmed); → expired once the chain is
//     past the expiry with less than the amount seen: what is confirmed is credited.

// TxFacts is what a receipt needs from the chain about one transaction.
type TxFacts struct {
	Sender       string          // who signed the transaction
	GasUsed      int64           // from its receipt
	TotalCostWei decimal.Decimal // gas used × effective gas price, in the native smallest unit
}

// ChainReader reads transactions for receipts (the watcher's chain clients).
type ChainReader interface {
	TxFacts(ctx context.Context, chainID int64, txHash string) (TxFacts, error)
}

// OnChain settles payments from the watcher's transfers.
type OnChain struct {
	Payments *Service
	Chains   ChainReader
	Risk     risk.Provider
}

// errSettlementMoved says the transfers changed between the read and the locked write; the
// next round settles on what is there then.
var errSettlementMoved = errors.New("payments: transfers changed while settling; retried next round")

// verdict is where a payment's transfers say it belongs.
type verdict struct {
	status    domain.PaymentStatus
	quote     *domain.Quote
	received  decimal.Decimal // counted transfers of the quote's token in the canonical chain
	confirmed decimal.Decimal // of those, confirmed
	counted   []store.Transfer
	last      *store.Transfer // the confirmed transfer that completed it: the receipt's transaction
}

// evaluate applies the rules to a payment's transfers. scannedPast says the settling chain has
// been scanned past the payment's expiry (no more timely transfer can appear there).
func evaluate(p domain.Payment, ts []store.Transfer, scannedPast func(chainID int64) bool) verdict {
	v := verdict{status: p.Status}
	if !p.Status.Open() {
		return v
	}
	timely := func(t store.Transfer) bool {
		return t.Status != store.TransferOrphaned && !t.BlockTime.After(p.ExpiresAt)
	}
	// A token can have several quotes (the checkout refreshes expired ones): its transfers are
	// judged against the one asking the least — every quote the customer was given stays
	// payable, so one paid under an expired quote is not held to its fresher price.
	quoteFor := map[string]*domain.Quote{}
	for i := range p.Quotes {
		q := &p.Quotes[i]
		if q.Status == domain.QuoteFailed {
			continue
		}
		if cur := quoteFor[q.Token.ID]; cur == nil || q.ExpectedAmountAsset.LessThan(cur.ExpectedAmountAsset) {
			quoteFor[q.Token.ID] = q
		}
	}
	value := map[uuid.UUID]decimal.Decimal{}
	for _, t := range ts {
		if q := quoteFor[t.TokenID]; q != nil && timely(t) {
			value[q.ID] = value[q.ID].Add(money.ValueUSD(t.Amount, q.Token.Decimals, q.RateUSDAsset))
		}
	}
	for i := range p.Quotes {
		q := &p.Quotes[i]
		val, ok := value[q.ID]
		if !ok {
			continue
		}
		if p.Received != nil && p.Received.QuoteID == q.ID {
			v.quote = q // stay on the quote already settling while it holds transfers
			break
		}
		if v.quote == nil || val.GreaterThan(value[v.quote.ID]) {
			v.quote = q
		}
	}
	if v.quote == nil {
		if p.Status == domain.PaymentProcessing {
			v.status = domain.PaymentPending // every counted transfer was reorged out
		}
		return v
	}
	for _, t := range ts {
		if t.TokenID != v.quote.Token.ID || !timely(t) {
			continue
		}
		v.received = v.received.Add(t.Amount)
		if t.Status == store.TransferConfirmed {
			v.confirmed = v.confirmed.Add(t.Amount)
			v.counted = append(v.counted, t)
			last := t
			v.last = &last
		}
	}
	past := scannedPast(v.quote.Token.Chain.ID)
	switch {
	case p.Type == domain.TypePayment && v.confirmed.GreaterThanOrEqual(v.quote.ExpectedAmountAsset):
		v.status = domain.PaymentCompleted
	case p.Type == domain.TypeDeposit && v.confirmed.IsPositive() && (v.confirmed.Equal(v.received) || past):
		v.status = domain.PaymentCompleted
	case past && p.Type == domain.TypePayment && v.received.LessThan(v.quote.ExpectedAmountAsset):
		v.status = domain.PaymentExpired // short, and nothing more can count: what is confirmed is credited
	default:
		v.status = domain.PaymentProcessing
	}
	if v.status != domain.PaymentCompleted && v.status != domain.PaymentExpired {
		v.counted, v.last = nil, nil
	}
	return v
}

// same reports whether the payment already is where the verdict puts it.
func (v verdict) same(p domain.Payment) bool {
	if v.status != p.Status {
		return false
	}
	if v.quote == nil {
		return p.Received == nil || p.Status == domain.PaymentPending
	}
	r := p.Received
	return r != nil && r.QuoteID == v.quote.ID && r.Amount.Equal(v.received) && r.Confirmed.Equal(v.confirmed)
}

// Reconcile moves one payment to where its transfers say it belongs. It reports whether the
// payment changed.
func (o *OnChain) Reconcile(ctx context.Context, paymentID uuid.UUID) (bool, error) {
	s := o.Payments
	rd := s.Store.Read(ctx)
	p, err := rd.PaymentByID(paymentID, s.Catalog)
	if err != nil {
		return false, err
	}
	if !p.Status.Open() {
		return false, nil // final meanwhile (another process, a manual settlement): nothing to do
	}
	ts, err := rd.PaymentTransfers(paymentID)
	if err != nil {
		return false, err
	}
	cursors, err := rd.CursorTimes()
	if err != nil {
		return false, err
	}
	past := func(chainID int64) bool {
		t, ok := cursors[chainID]
		return ok && t.After(p.ExpiresAt)
	}
	v := evaluate(p, ts, past)
	if v.same(p) {
		return false, nil
	}
	// What the receipt needs from outside the database is read before the transaction.
	var receipt *domain.PaymentReceipt
	if v.status == domain.PaymentCompleted {
		if receipt, err = o.receipt(ctx, p, v); err != nil {
			return false, err
		}
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		ts, err := tx.PaymentTransfers(paymentID)
		if err != nil {
			return err
		}
		var counted []uuid.UUID
		if v.status == domain.PaymentProcessing && v.confirmed.IsPositive() && p.Status == domain.PaymentPending {
			// Seen and already confirmed short (a watcher catching up): announce both steps,
			// payment.processing and then payment.underpaid, as a slower watcher would have.
			seen := v
			seen.confirmed = decimal.Zero
			if _, err := s.Core.UpdatePaymentTx(tx, paymentID, func(p *domain.Payment) error { return s.apply(p, seen, nil) }); err != nil {
				return err
			}
		}
		_, err = s.Core.UpdatePaymentTx(tx, paymentID, func(p *domain.Payment) error {
			if !p.Status.Open() {
				return errSettlementMoved
			}
			now := evaluate(*p, ts, past)
			if now.status == domain.PaymentCompleted && (now.last == nil || v.last == nil || now.last.ID != v.last.ID) {
				return errSettlementMoved
			}
			for _, t := range now.counted {
				counted = append(counted, t.ID)
			}
			return s.apply(p, now, receipt)
		})
		if err != nil {
			return err
		}
		return tx.MarkCredited(counted, s.Now())
	})
	if errors.Is(err, errSettlementMoved) {
		return false, nil
	}
	return err == nil, err
}

// apply moves a locked payment to the verdict.
func (s *Service) apply(p *domain.Payment, v verdict, receipt *domain.PaymentReceipt) error {
	if v.quote == nil {
		p.Received = nil
		if v.status != p.Status {
			return p.TransitionTo(v.status)
		}
		return nil
	}
	p.Received = &domain.Received{QuoteID: v.quote.ID, Amount: v.received, Confirmed: v.confirmed}
	q := *v.quote
	switch v.status {
	case domain.PaymentCompleted:
		if err := s.finaliseOnChain(p, q, v.confirmed); err != nil {
			return err
		}
		p.Receipt = receipt
	case domain.PaymentExpired:
		a, err := s.settledAmounts(*p, q, v.confirmed) // short: what is confirmed is credited
		if err != nil {
			return err
		}
		setFees(p, a)
		for i := range p.Quotes {
			if p.Quotes[i].Status == domain.QuoteActive {
				p.Quotes[i].Status = domain.QuoteExpired
			}
		}
	}
	if v.status != p.Status {
		return p.TransitionTo(v.status)
	}
	return nil
}

// finaliseOnChain fixes a completed payment's amounts (settledAmounts: a payment is due its
// quote's amount and keeps any excess, credited — the funds arrived and are the merchant's to
// refund; a deposit is worth what arrived; values round down to the cent).
func (s *Service) finaliseOnChain(p *domain.Payment, q domain.Quote, settled decimal.Decimal) error {
	a, err := s.settledAmounts(*p, q, settled)
	if err != nil {
		return fmt.Errorf("payment %s: %w", p.ID, err)
	}
	setAmounts(p, a)
	markPaid(p, q)
	return nil
}

// receipt builds a completed payment's receipt from the transaction that completed it.
func (o *OnChain) receipt(ctx context.Context, p domain.Payment, v verdict) (*domain.PaymentReceipt, error) {
	s := o.Payments
	t := v.last
	q := *v.quote
	facts, err := o.Chains.TxFacts(ctx, t.ChainID, t.TxHash)
	if err != nil {
		return nil, fmt.Errorf("receipt of %s on %s: %w", t.TxHash, chains.CAIP2(t.ChainID), err)
	}
	screened, err := o.Risk.Screen(ctx, t.ChainID, t.From)
	if err != nil {
		return nil, fmt.Errorf("risk screening of %s: %w", t.From, err)
	}
	a, err := s.settledAmounts(p, q, v.confirmed)
	if err != nil {
		return nil, fmt.Errorf("payment %s: %w", p.ID, err)
	}
	hash, block, ts := t.TxHash, t.BlockNumber, t.BlockTime
	sender, gas, cost := strings.ToLower(facts.Sender), facts.GasUsed, facts.TotalCostWei
	// A transfer whose token holder did not sign the transaction was paid for by someone else:
	// a relayer or a paymaster.
	sponsored := sender != strings.ToLower(t.From)
	by := domain.ProcessedByCron
	score, severity, provider := screened.Score, string(screened.Severity), screened.Provider
	cursor, err := s.Store.Read(ctx).Cursor(t.ChainID)
	if err != nil {
		return nil, err
	}
	confs := int32(min(domain.Confirmations(cursor.Number, t.BlockNumber), 1<<30))
	r := &domain.PaymentReceipt{PaymentID: p.ID, QuoteID: q.ID, Token: q.Token, SettledAmountAsset: v.confirmed,
		SettledAmountUSD: a.SettledUSD, TxHash: &hash, TxBlockNumber: &block, TxTimestamp: &ts, TxSenderAddress: &sender,
		TxGasUsed: &gas, TxTotalCost: &cost, TxIsSponsored: &sponsored, ProcessedBy: &by, TxRiskScore: &score,
		TxRiskSeverity: &severity, TxRiskProvider: &provider, Confirmations: confs,
		RequiredConfirmations: q.Token.Chain.RequiredConfirmations, CreatedAt: s.Now()}
	price, err := o.nativePrice(ctx, p, t.ChainID)
	if err == nil {
		var f int64
		if f, err = money.GasCostUSDFractions(cost, q.Token.Chain.NativeDecimals, price); err == nil {
			r.TxTotalCostUSDFractions = &f
		}
	}
	if err != nil {
		s.Log.WarnContext(ctx, "receipt without the transaction's USD cost", "chain", chains.CAIP2(t.ChainID), "err", err)
	}
	return r, nil
}

// nativePrice is the chain's native token price: the payment's own quote rate when it has one,
// the price source otherwise.
func (o *OnChain) nativePrice(ctx context.Context, p domain.Payment, chainID int64) (decimal.Decimal, error) {
	for _, q := range p.Quotes {
		if q.Token.Chain.ID == chainID && q.Token.AssetType == domain.Native {
			return q.RateUSDAsset, nil
		}
	}
	if t, ok := o.Payments.Catalog.NativeToken(chainID); ok {
		return o.Payments.Prices.PriceUSD(ctx, pricing.Asset{Symbol: t.Symbol, MarketAPIID: t.MarketAPIID})
	}
	return decimal.Decimal{}, fmt.Errorf("no native token for %s in the catalogue", chains.CAIP2(chainID))
}

// CreditUncounted credits, one by one, a chain's confirmed transfers that their (final)
// payment's settlement did not count, at the rate of the payment's quote for the token (the
// market price when the payment had none), and announces each as payment.late_transfer. It
// returns how many it credited.
func (o *OnChain) CreditUncounted(ctx context.Context, chainID int64, limit int) (int, error) {
	s := o.Payments
	ts, err := s.Store.Read(ctx).UncreditedTransfers(chainID, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, t := range ts {
		if err := o.creditOne(ctx, t); err != nil {
			// One transfer that cannot be credited now (no price, say) must not hold up the rest.
			s.Log.ErrorContext(ctx, "credit a transfer on its own", "tx", t.TxHash, "log_index", t.LogIndex, "err", err)
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// creditOne credits one uncounted transfer (see CreditUncounted).
func (o *OnChain) creditOne(ctx context.Context, t store.Transfer) error {
	s := o.Payments
	p, err := s.Store.Read(ctx).PaymentByID(*t.PaymentID, s.Catalog)
	if err != nil {
		return err
	}
	if r := p.Receipt; r != nil && r.ProcessedBy != nil && *r.ProcessedBy == domain.ProcessedByManual && r.TxHash != nil &&
		strings.EqualFold(*r.TxHash, t.TxHash) {
		// The operator settled the payment with this very transaction: its credit holds it.
		return s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.MarkCredited([]uuid.UUID{t.ID}, s.Now()) })
	}
	q, reason, err := o.creditQuote(ctx, p, t)
	if err != nil {
		return err
	}
	a, err := s.transferAmounts(q, t.Amount)
	if err != nil {
		return fmt.Errorf("transfer %s: %w", t.ID, err)
	}
	net := a.NetCents
	note := lifecycle.TransferNote{ChainID: chains.CAIP2(t.ChainID), TxHash: t.TxHash, LogIndex: t.LogIndex, TokenID: t.TokenID,
		AmountAsset: t.Amount.String(), Reason: reason}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		_, err := s.Core.CreditTransferTx(tx, p.ID, t.ID, net, note)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return nil // credited by another process meanwhile
	}
	if err != nil {
		return err
	}
	s.Log.InfoContext(ctx, "transfer credited on its own", "payment", p.ID, "tx", t.TxHash, "log_index", t.LogIndex,
		"reason", reason, "credited_cents", net)
	return nil
}

// creditQuote is the rate a transfer is credited at, and why it was not counted.
func (o *OnChain) creditQuote(ctx context.Context, p domain.Payment, t store.Transfer) (domain.Quote, string, error) {
	reason := "after_settlement"
	if t.BlockTime.After(p.ExpiresAt) {
		reason = "after_expiry"
	}
	for _, q := range p.Quotes {
		if q.Token.ID == t.TokenID {
			if p.Receipt != nil && p.Receipt.QuoteID != q.ID {
				reason = "other_token"
			}
			return q, reason, nil
		}
	}
	tok, ok := o.Payments.Catalog.Tokens[t.TokenID]
	if !ok {
		return domain.Quote{}, "", fmt.Errorf("transfer %s: token %s is not in the catalogue", t.ID, t.TokenID)
	}
	rate, err := o.Payments.Prices.PriceUSD(ctx, pricing.Asset{Symbol: tok.Symbol, MarketAPIID: tok.MarketAPIID, Stablecoin: tok.Type == domain.Stablecoin})
	if err != nil {
		return domain.Quote{}, "", err
	}
	return domain.Quote{Token: tok, RateUSDAsset: rate}, "unquoted_token", nil
}

// AssignCustomerTransfers attributes transfers to customers' reusable deposit addresses: to the
// open deposit using the address, or to a new deposit recorded for the customer when none is
// open, so a customer who pays to their old address keeps crediting the merchant.
func (o *OnChain) AssignCustomerTransfers(ctx context.Context, chainID int64, limit int) error {
	s := o.Payments
	ts, err := s.Store.Read(ctx).UnassignedTransfers(chainID, limit)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range ts {
		if err := o.assign(ctx, t); err != nil {
			// The transfer stays recorded and unattributed, retried next round; the others go on.
			s.Log.ErrorContext(ctx, "attribute a transfer to a customer's deposit", "tx", t.TxHash, "err", err)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (o *OnChain) assign(ctx context.Context, t store.Transfer) error {
	s := o.Payments
	pid, err := s.Store.Read(ctx).OpenPaymentAt(t.DepositAddressID)
	if errors.Is(err, store.ErrNotFound) {
		if pid, err = o.openCustomerDeposit(ctx, t); err != nil {
			return err
		}
	}
	if err != nil {
		return err
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.AssignTransfer(t.ID, pid) })
	if errors.Is(err, store.ErrConflict) {
		return nil // attributed by another process meanwhile
	}
	return err
}

func (o *OnChain) openCustomerDeposit(ctx context.Context, t store.Transfer) (uuid.UUID, error) {
	s := o.Payments
	rd := s.Store.Read(ctx)
	addr, err := rd.DepositAddressByID(t.DepositAddressID)
	if err != nil {
		return uuid.Nil, err
	}
	if addr.CustomerRefID == nil {
		return uuid.Nil, fmt.Errorf("transfer %s: deposit address %s belongs to no customer and no payment", t.ID, addr.Address)
	}
	m, err := rd.GetMerchant(addr.MerchantID)
	if err != nil {
		return uuid.Nil, err
	}
	// The deposit is of the address's mode (a customer's reusable address is per mode). Money of
	// the other mode arriving there is not counted by it; once it expires the transfer is
	// credited in its own chain's mode, announced to that mode's endpoints.
	m.Mode = addr.Mode
	if cm := o.Payments.Catalog.ChainMode(t.ChainID); cm != addr.Mode {
		s.Log.WarnContext(ctx, "a transfer of the other mode reached a customer's reusable address", "chain", t.ChainID,
			"tx", t.TxHash, "address_mode", addr.Mode, "transfer_mode", cm)
	}
	order := "auto-" + t.TxHash[:18] // a deposit the customer made without asking: named after its transaction
	// Recorded even if the merchant has turned deposits off since: the money arrived and is theirs.
	m.DepositsEnabled = true
	created, err := s.Create(ctx, m, CreateInput{Type: domain.TypeDeposit, Currency: "USD", OrderID: order,
		CustomerRefID: addr.CustomerRefID}, nil)
	if err != nil {
		return uuid.Nil, fmt.Errorf("record a deposit for customer %q's transfer %s: %w", *addr.CustomerRefID, t.TxHash, err)
	}
	s.Log.InfoContext(ctx, "deposit recorded for a transfer to a customer's address", "payment", created.Payment.ID,
		"customer_ref_id", *addr.CustomerRefID, "tx", t.TxHash)
	return created.Payment.ID, nil
}
