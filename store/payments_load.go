package store

import (
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"gorm.io/gorm"

	"github.com/paymentsd/paymentsd/domain"
)

// paymentAddressRow is a payment read together with its deposit address, in one join.
type paymentAddressRow struct {
	Payment paymentRow        `gorm:"embedded"`
	Addr    depositAddressRow `gorm:"embedded;embeddedPrefix:addr_"`
}

// withAddress selects payments joined with their deposit addresses (paymentAddressRow).
func withAddress(q *gorm.DB) *gorm.DB {
	return q.Joins("JOIN deposit_addresses ON deposit_addresses.id = payments.deposit_address_id").
		Select("payments.*, deposit_addresses.id AS addr_id, deposit_addresses.merchant_id AS addr_merchant_id, " +
			"deposit_addresses.payment_id AS addr_payment_id, deposit_addresses.customer_ref_id AS addr_customer_ref_id, " +
			"deposit_addresses.derivation_index AS addr_derivation_index, deposit_addresses.address AS addr_address, " +
			"deposit_addresses.created_at AS addr_created_at")
}

// split separates joined rows into payment rows and their addresses by id.
func split(joined []paymentAddressRow) ([]paymentRow, map[uuid.UUID]domain.DepositAddress) {
	rows := make([]paymentRow, len(joined))
	addrs := make(map[uuid.UUID]domain.DepositAddress, len(joined))
	for i, j := range joined {
		rows[i] = j.Payment
		addrs[j.Addr.ID] = j.Addr.domain()
	}
	return rows, addrs
}

// hydrate loads what a page of payments references with one query per table, never one per row,
// and skips what it need not read: addresses already joined (addrs, nil when not), merchants the
// caller already holds (known), receipts and refunds when no payment of the page is completed
// (only a completed payment has them).
func (t *Tx) hydrate(rows []paymentRow, cat domain.Catalog, addrs map[uuid.UUID]domain.DepositAddress, known ...domain.Merchant) ([]domain.Payment, error) {
	if len(rows) == 0 {
		return []domain.Payment{}, nil
	}
	merchantByID := map[uuid.UUID]domain.Merchant{}
	for _, m := range known {
		merchantByID[m.ID] = m
	}
	ids := make([]uuid.UUID, len(rows))
	addrIDs := make([]uuid.UUID, len(rows))
	var completed []uuid.UUID
	missing := map[uuid.UUID]struct{}{}
	for i, r := range rows {
		ids[i] = r.ID
		addrIDs[i] = r.DepositAddressID
		if _, ok := merchantByID[r.MerchantID]; !ok {
			missing[r.MerchantID] = struct{}{}
		}
		if r.Status == domain.PaymentCompleted {
			completed = append(completed, r.ID)
		}
	}
	if len(missing) > 0 {
		mids := make([]uuid.UUID, 0, len(missing))
		for id := range missing {
			mids = append(mids, id)
		}
		var merchants []merchantRow
		if err := t.db.Where("id IN ?", mids).Find(&merchants).Error; err != nil {
			return nil, translate(err)
		}
		for _, m := range merchants {
			merchantByID[m.ID] = m.domain()
		}
	}
	if addrs == nil {
		var found []depositAddressRow
		if err := t.db.Where("id IN ?", addrIDs).Find(&found).Error; err != nil {
			return nil, translate(err)
		}
		addrs = make(map[uuid.UUID]domain.DepositAddress, len(found))
		for _, a := range found {
			addrs[a.ID] = a.domain()
		}
	}
	var quotes []quoteRow
	if err := t.db.Where("payment_id IN ?", ids).Order("created_at, id").Find(&quotes).Error; err != nil {
		return nil, translate(err)
	}
	var receipts []paymentReceiptRow
	if len(completed) > 0 {
		if err := t.db.Where("payment_id IN ?", completed).Find(&receipts).Error; err != nil {
			return nil, translate(err)
		}
	}
	quotesByPayment := map[uuid.UUID][]domain.Quote{}
	quoteByID := map[uuid.UUID]domain.Quote{}
	for _, q := range quotes {
		dq := domain.Quote{ID: q.ID, PaymentID: q.PaymentID, Token: cat.Tokens[q.TokenID],
			ExpectedAmountAsset: q.ExpectedAmountAsset, RateUSDAsset: q.RateUSDAsset, AmountDueCents: q.AmountDueCents,
			ConvenienceFeeCents: q.ConvenienceFeeCents, ExpiresAt: q.ExpiresAt, Status: q.Status, CreatedAt: q.CreatedAt}
		rate := q.RateUSDAsset
		dq.TokenPriceUSD = &rate
		quotesByPayment[q.PaymentID] = append(quotesByPayment[q.PaymentID], dq)
		quoteByID[q.ID] = dq
	}
	refunded := map[uuid.UUID]int64{}
	if len(completed) > 0 { // only a completed payment can be refunded
		var err error
		if refunded, err = t.refundedCents(completed); err != nil {
			return nil, err
		}
	}
	receiptByPayment := map[uuid.UUID]*domain.PaymentReceipt{}
	for _, r := range receipts {
		receiptByPayment[r.PaymentID] = &domain.PaymentReceipt{PaymentID: r.PaymentID, QuoteID: r.QuoteID,
			Token: cat.Tokens[r.TokenID], SettledAmountAsset: r.SettledAmountAsset, SettledAmountUSD: r.SettledAmountUSD,
			TxHash: r.TxHash, TxBlockNumber: r.TxBlockNumber, TxTimestamp: r.TxTimestamp, TxSenderAddress: r.TxSenderAddress,
			TxGasUsed: r.TxGasUsed, TxTotalCost: decimalPtr(r.TxTotalCost), TxTotalCostUSDFractions: r.TxTotalCostUSDFractions,
			TxIsSponsored: r.TxIsSponsored, ProcessedBy: r.ProcessedBy, TxRiskScore: r.TxRiskScore,
			TxRiskSeverity: r.TxRiskSeverity, TxRiskProvider: r.TxRiskProvider, Confirmations: r.Confirmations,
			RequiredConfirmations: r.RequiredConfirmations, CreatedAt: r.CreatedAt}
	}
	out := make([]domain.Payment, len(rows))
	for i, r := range rows {
		qs := quotesByPayment[r.ID]
		if qs == nil {
			qs = []domain.Quote{}
		}
		out[i] = domain.Payment{ID: r.ID, Merchant: merchantByID[r.MerchantID], Mode: domain.ModeOf(r.Livemode), Type: r.Type,
			AmountInCents: r.AmountInCents, AmountDueCents: r.AmountDueCents, ConvenienceFeeCents: r.ConvenienceFeeCents,
			MerchantFeeCents: r.MerchantFeeCents, SwapFeeCents: r.SwapFeeCents, AmountMerchantNetCents: r.AmountMerchantNetCents,
			Currency: r.Currency, Status: r.Status, OrderID: r.OrderID, CustomerRefID: r.CustomerRefID,
			RedirectURL: r.RedirectURL, CustomMetadata: r.CustomMetadata, SecretHash: r.SecretHash,
			DepositAddress: addrs[r.DepositAddressID], Quotes: qs, Receipt: receiptByPayment[r.ID], Received: receivedOf(r),
			AmountRefundedCents: refunded[r.ID], ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Version: r.Version}
	}
	return out, nil
}

func decimalPtr(n decimal.NullDecimal) *decimal.Decimal {
	if !n.Valid {
		return nil
	}
	d := n.Decimal
	return &d
}

func nullDecimal(d *decimal.Decimal) decimal.NullDecimal {
	if d == nil {
		return decimal.NullDecimal{}
	}
	return decimal.NullDecimal{Decimal: *d, Valid: true}
}

func receivedOf(r paymentRow) *domain.Received {
	if r.SettlingQuoteID == nil {
		return nil
	}
	return &domain.Received{QuoteID: *r.SettlingQuoteID, Amount: r.ReceivedAmountAsset.Decimal, Confirmed: r.ConfirmedAmountAsset.Decimal}
}
