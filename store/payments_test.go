package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

func TestInsertAndGetPayment(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		cat := loadCatalog(t, st)
		acme := createMerchant(t, st, "Acme Corp", "acme")
		other := createMerchant(t, st, "Globex", "globex")
		want := insertPayment(t, st, cat, acme, paymentSpec{Amount: 123_45, Status: "pending"})

		got, err := st.Read(ctx).GetPayment(acme.ID, domain.ModeTest, want.ID, cat)
		require.NoError(t, err)
		assertPaymentEqual(t, want, got)
		require.Len(t, got.Quotes, 2)
		assert.Equal(t, bigAmount, got.Quotes[1].ExpectedAmountAsset.String(), "NUMERIC(78,0)/TEXT round trip is exact")
		assert.Equal(t, bigRate, got.Quotes[1].RateUSDAsset.String(), "rate round trip is exact")
		assert.Equal(t, "123450000", got.Quotes[0].ExpectedAmountAsset.String())
		if assert.NotNil(t, got.Quotes[1].TokenPriceUSD) {
			assert.Equal(t, bigRate, got.Quotes[1].TokenPriceUSD.String(), "token price is the quote's rate")
		}
		assert.Nil(t, got.Receipt, "unsettled payment has no receipt")

		_, err = st.Read(ctx).GetPayment(other.ID, domain.ModeTest, want.ID, cat)
		assert.ErrorIs(t, err, store.ErrNotFound, "another merchant's payment is not found")
		_, err = st.Read(ctx).GetPayment(acme.ID, domain.ModeTest, uuid.Must(uuid.NewV7()), cat)
		assert.ErrorIs(t, err, store.ErrNotFound)

		// A payment id is unique.
		dup := want
		dup.Quotes = nil
		err = st.InTx(ctx, func(tx *store.Tx) error { return tx.InsertPayment(dup) })
		assert.ErrorIs(t, err, store.ErrConflict)

		// Settling attaches the receipt, marks the used quote and expires the rest, exactly once.
		settled := settle(t, st, want, "0x"+strings.Repeat("ab", 32), "0x"+strings.Repeat("cd", 20))
		got, err = st.Read(ctx).GetPayment(acme.ID, domain.ModeTest, want.ID, cat)
		require.NoError(t, err)
		assert.Equal(t, domain.PaymentCompleted, got.Status)
		assert.Equal(t, int64(2), got.Version)
		assert.Equal(t, settled.MerchantFeeCents, got.MerchantFeeCents)
		assert.Equal(t, settled.ConvenienceFeeCents, got.ConvenienceFeeCents)
		assert.Equal(t, []domain.QuoteStatus{domain.QuoteUsed, domain.QuoteExpired}, []domain.QuoteStatus{got.Quotes[0].Status, got.Quotes[1].Status})
		require.NotNil(t, got.Receipt)
		assert.Equal(t, want.Quotes[0].ID, got.Receipt.QuoteID)
		assert.Equal(t, want.Quotes[0].Token, got.Receipt.Token)
		assert.Equal(t, settled.Receipt.TxHash, got.Receipt.TxHash)
		assert.Equal(t, settled.Receipt.TxSenderAddress, got.Receipt.TxSenderAddress)
		assert.Equal(t, "123450000", got.Receipt.SettledAmountAsset.String())
		assert.True(t, got.Receipt.SettledAmountUSD.Equal(dec(t, "12.34")), "settled usd %s", got.Receipt.SettledAmountUSD)
		if assert.NotNil(t, got.Receipt.TxTotalCost) {
			assert.Equal(t, bigAmount, got.Receipt.TxTotalCost.String())
		}
		assert.Nil(t, got.Receipt.TxGasUsed)
		err = st.InTx(ctx, func(tx *store.Tx) error { return tx.SavePaymentChange(want, settled) })
		assert.ErrorIs(t, err, store.ErrConflict, "a change made from a stale version is refused (no lost update)")

		locked, err := lockPayment(st, want.ID, cat)
		require.NoError(t, err)
		assert.Equal(t, acme.ID, locked.Merchant.ID)
		assert.Equal(t, domain.PaymentCompleted, locked.Status)
	})
}

func lockPayment(st *store.Store, id uuid.UUID, cat domain.Catalog) (p domain.Payment, err error) {
	err = st.InTx(context.Background(), func(tx *store.Tx) error { p, err = tx.LockPayment(id, cat); return err })
	return p, err
}

func assertPaymentEqual(t *testing.T, want, got domain.Payment) {
	t.Helper()
	assert.Equal(t, want.ID, got.ID)
	assert.Equal(t, want.Merchant.ID, got.Merchant.ID)
	assert.Equal(t, want.Merchant.ShortName, got.Merchant.ShortName)
	assert.Equal(t, want.Type, got.Type)
	assert.Equal(t, want.AmountInCents, got.AmountInCents)
	assert.Equal(t, want.AmountDueCents, got.AmountDueCents)
	assert.Equal(t, want.AmountMerchantNetCents, got.AmountMerchantNetCents)
	assert.Equal(t, want.ConvenienceFeeCents, got.ConvenienceFeeCents)
	assert.Equal(t, want.Currency, got.Currency)
	assert.Equal(t, want.Status, got.Status)
	assert.Equal(t, want.OrderID, got.OrderID)
	assert.Equal(t, want.CustomerRefID, got.CustomerRefID)
	assert.Equal(t, want.RedirectURL, got.RedirectURL)
	assert.Equal(t, want.CustomMetadata, got.CustomMetadata)
	assert.Equal(t, want.SecretHash, got.SecretHash)
	assert.True(t, want.ExpiresAt.Equal(got.ExpiresAt), "expires_at %s != %s", got.ExpiresAt, want.ExpiresAt)
	assert.True(t, want.CreatedAt.Equal(got.CreatedAt), "created_at %s != %s", got.CreatedAt, want.CreatedAt)
	assert.True(t, want.UpdatedAt.Equal(got.UpdatedAt), "updated_at %s != %s", got.UpdatedAt, want.UpdatedAt)

	wa, ga := want.DepositAddress, got.DepositAddress
	assert.Equal(t, wa.ID, ga.ID)
	assert.Equal(t, wa.MerchantID, ga.MerchantID)
	assert.Equal(t, wa.PaymentID, ga.PaymentID)
	assert.Equal(t, wa.DerivationIndex, ga.DerivationIndex)
	assert.Equal(t, wa.Address, ga.Address)
	assert.True(t, wa.CreatedAt.Equal(ga.CreatedAt))

	require.Len(t, got.Quotes, len(want.Quotes))
	for i, wq := range want.Quotes {
		gq := got.Quotes[i]
		assert.Equal(t, wq.ID, gq.ID, "quote %d (ordered by created_at)", i)
		assert.Equal(t, want.ID, gq.PaymentID)
		assert.Equal(t, wq.Token, gq.Token, "quote %d token resolved from the catalogue", i)
		assert.Equal(t, wq.ExpectedAmountAsset.String(), gq.ExpectedAmountAsset.String(), "quote %d amount", i)
		assert.True(t, wq.RateUSDAsset.Equal(gq.RateUSDAsset), "quote %d rate %s != %s", i, gq.RateUSDAsset, wq.RateUSDAsset)
		assert.Equal(t, wq.AmountDueCents, gq.AmountDueCents)
		assert.Equal(t, wq.ConvenienceFeeCents, gq.ConvenienceFeeCents)
		assert.Equal(t, wq.Status, gq.Status)
		assert.True(t, wq.ExpiresAt.Equal(gq.ExpiresAt))
		assert.True(t, wq.CreatedAt.Equal(gq.CreatedAt))
	}
}

// listFixture is one merchant's six payments (plus a second merchant's) with distinct types,
// statuses, amounts, creation times and deposit addresses chosen for the search cases.
type listFixture struct {
	st         *store.Store
	cat        domain.Catalog
	acme, glob domain.Merchant
	p          []domain.Payment // acme's, in creation order
	globP      []domain.Payment
}

func newListFixture(t *testing.T, st *store.Store) *listFixture {
	t.Helper()
	f := &listFixture{st: st, cat: loadCatalog(t, st)}
	f.acme = createMerchant(t, st, "Acme Corp", "acmeshop")
	f.glob = createMerchant(t, st, "Globex", "glo_bex")
	specs := []paymentSpec{
		{Type: "payment", Status: "pending", Amount: 1000, Address: "0xaaaa" + strings.Repeat("1", 36)},
		{Type: "payment", Status: "completed", Amount: 500, Address: "0xaaaa" + strings.Repeat("2", 36)},
		{Type: "deposit", Status: "pending", Amount: 2500, Address: "0xbbbb" + strings.Repeat("3", 36)},
		{Type: "payment", Status: "expired", Amount: 1500},
		{Type: "deposit", Status: "completed", Amount: 700},
		{Type: "payment", Status: "pending", Amount: 3000},
	}
	for i, s := range specs {
		s.CreatedAt = t0.Add(time.Duration(i) * time.Minute)
		f.p = append(f.p, insertPayment(t, st, f.cat, f.acme, s))
	}
	f.globP = append(f.globP,
		insertPayment(t, st, f.cat, f.glob, paymentSpec{Amount: 900, Address: "0xaaaa" + strings.Repeat("9", 36)}),
		insertPayment(t, st, f.cat, f.glob, paymentSpec{Amount: 800, CreatedAt: t0.Add(time.Hour)}))
	return f
}

func (f *listFixture) list(t *testing.T, filter store.PaymentFilter) ([]domain.Payment, int64) {
	t.Helper()
	if filter.MerchantID == uuid.Nil {
		filter.MerchantID = f.acme.ID
	}
	if filter.Limit == 0 {
		filter.Limit = 100
	}
	ps, total, err := f.st.Read(context.Background()).ListPayments(filter, f.cat)
	require.NoError(t, err, "filter %+v", filter)
	require.NotNil(t, ps, "an empty page is an empty slice")
	return ps, total
}

// ids maps indexes of f.p to ids.
func (f *listFixture) ids(idx ...int) []uuid.UUID {
	out := make([]uuid.UUID, len(idx))
	for i, n := range idx {
		out[i] = f.p[n].ID
	}
	return out
}

func TestListPayments(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		f := newListFixture(t, st)
		cases := []struct {
			name   string
			filter store.PaymentFilter
			want   []int
			total  int64
		}{
			{"default newest first", store.PaymentFilter{}, []int{5, 4, 3, 2, 1, 0}, 6},
			{"created_at asc", store.PaymentFilter{SortBy: "created_at", Ascending: true}, []int{0, 1, 2, 3, 4, 5}, 6},
			{"created_at desc", store.PaymentFilter{SortBy: "created_at"}, []int{5, 4, 3, 2, 1, 0}, 6},
			{"amount asc", store.PaymentFilter{SortBy: "amount_in_cents", Ascending: true}, []int{1, 4, 0, 3, 2, 5}, 6},
			{"amount desc", store.PaymentFilter{SortBy: "amount_in_cents"}, []int{5, 2, 3, 0, 4, 1}, 6},
			{"type deposit", store.PaymentFilter{Type: "deposit"}, []int{4, 2}, 2},
			{"type payment", store.PaymentFilter{Type: "payment", Ascending: true}, []int{0, 1, 3, 5}, 4},
			{"status pending", store.PaymentFilter{Status: "pending"}, []int{5, 2, 0}, 3},
			{"status completed by amount", store.PaymentFilter{Status: "completed", SortBy: "amount_in_cents", Ascending: true}, []int{1, 4}, 2},
			{"type and status", store.PaymentFilter{Type: "payment", Status: "pending"}, []int{5, 0}, 2},
			{"status with no match", store.PaymentFilter{Status: "cancelled"}, []int{}, 0},
			{"page 2 by amount", store.PaymentFilter{SortBy: "amount_in_cents", Ascending: true, Limit: 2, Offset: 2}, []int{0, 3}, 6},
			{"last partial page", store.PaymentFilter{Limit: 4, Offset: 4}, []int{1, 0}, 6},
			{"offset past the end", store.PaymentFilter{Limit: 10, Offset: 6}, []int{}, 6},
			{"limit 1", store.PaymentFilter{Limit: 1}, []int{5}, 6},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ps, total := f.list(t, c.filter)
				assert.Equal(t, c.total, total, "total counts every match, not the page")
				assert.Equal(t, f.ids(c.want...), paymentIDs(ps))
			})
		}

		// The page is fully loaded: merchant, deposit address and quotes of each payment.
		ps, _ := f.list(t, store.PaymentFilter{Ascending: true})
		require.Len(t, ps, len(f.p))
		for i := range ps {
			assertPaymentEqual(t, f.p[i], ps[i])
		}

		// The other merchant sees only its own.
		ps, total := f.list(t, store.PaymentFilter{MerchantID: f.glob.ID})
		assert.EqualValues(t, 2, total)
		assert.Equal(t, []uuid.UUID{f.globP[1].ID, f.globP[0].ID}, paymentIDs(ps))
	})
}

func TestListPaymentsTiesBreakOnID(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		cat := loadCatalog(t, st)
		m := createMerchant(t, st, "Acme Corp", "acme")
		var ps []domain.Payment
		for range 5 {
			ps = append(ps, insertPayment(t, st, cat, m, paymentSpec{Amount: 100, NoQuotes: true}))
		}
		ids := paymentIDs(ps)
		slices.SortFunc(ids, func(a, b uuid.UUID) int {
			switch {
			case idLess(a, b):
				return -1
			case idLess(b, a):
				return 1
			}
			return 0
		})
		for _, sortBy := range []string{"created_at", "amount_in_cents"} {
			var asc []uuid.UUID
			for off := int32(0); off < 5; off += 2 { // paging must neither skip nor repeat rows
				page, total, err := st.Read(context.Background()).ListPayments(store.PaymentFilter{MerchantID: m.ID,
					SortBy: sortBy, Ascending: true, Limit: 2, Offset: off}, cat)
				require.NoError(t, err)
				assert.EqualValues(t, 5, total)
				asc = append(asc, paymentIDs(page)...)
			}
			assert.Equal(t, ids, asc, "%s ties ascend by id", sortBy)
			page, _, err := st.Read(context.Background()).ListPayments(store.PaymentFilter{MerchantID: m.ID,
				SortBy: sortBy, Limit: 5}, cat)
			require.NoError(t, err)
			desc := paymentIDs(page)
			slices.Reverse(desc)
			assert.Equal(t, ids, desc, "%s ties descend by id", sortBy)
			for _, p := range page {
				assert.Empty(t, p.Quotes)
				assert.NotNil(t, p.Quotes, "no quotes is an empty list")
			}
		}
	})
}

func TestSearchPayments(t *testing.T) {
	eachBackend(t, func(t *testing.T, st *store.Store) {
		f := newListFixture(t, st)
		txHash := "0xfeed" + strings.Repeat("0", 60)
		sender := "0xcafe" + strings.Repeat("0", 36)
		settle(t, st, f.p[5], txHash, sender) // p[5] is pending: settleable

		all := []int{5, 4, 3, 2, 1, 0}
		cases := []struct {
			name   string
			filter store.PaymentFilter
			want   []int
		}{
			{"full payment id", store.PaymentFilter{Search: f.p[3].ID.String()}, []int{3}},
			{"full payment id upper case", store.PaymentFilter{Search: strings.ToUpper(f.p[4].ID.String())}, []int{4}},
			{"id prefix is not an id match", store.PaymentFilter{Search: f.p[3].ID.String()[:13]}, []int{}},
			{"address prefix", store.PaymentFilter{Search: "0xaaaa"}, []int{1, 0}},
			{"address prefix mixed case", store.PaymentFilter{Search: "0xAaAA"}, []int{1, 0}},
			{"full address upper case", store.PaymentFilter{Search: strings.ToUpper(f.p[2].DepositAddress.Address)}, []int{2}},
			{"address infix does not match", store.PaymentFilter{Search: "aaaa"}, []int{}},
			{"address prefix with status", store.PaymentFilter{Search: "0xaaaa", Status: "completed"}, []int{1}},
			{"address prefix with type", store.PaymentFilter{Search: "0xbbbb", Type: "payment"}, []int{}},
			{"address prefix sorted by amount", store.PaymentFilter{Search: "0xAAAA", SortBy: "amount_in_cents", Ascending: true}, []int{1, 0}},
			{"tx hash prefix", store.PaymentFilter{Search: "0xFEED"}, []int{5}},
			{"sender prefix", store.PaymentFilter{Search: "0xcafe"}, []int{5}},
			{"full tx hash", store.PaymentFilter{Search: txHash}, []int{5}},
			{"short name substring", store.PaymentFilter{Search: "MESH"}, all},
			{"short name in full", store.PaymentFilter{Search: "acmeshop"}, all},
			{"short name with filter", store.PaymentFilter{Search: "acme", Type: "deposit"}, []int{4, 2}},
			{"short name with page", store.PaymentFilter{Search: "shop", Limit: 2, Offset: 1}, []int{4, 3}},
			{"nothing matches", store.PaymentFilter{Search: "0xdeadbeef"}, []int{}},
			{"nothing matches either", store.PaymentFilter{Search: "zzz"}, []int{}},
			{"percent is literal", store.PaymentFilter{Search: "%"}, []int{}},
			{"underscore is literal", store.PaymentFilter{Search: "_"}, []int{}},
			{"percent inside a prefix is literal", store.PaymentFilter{Search: "0xaa%"}, []int{}},
			{"underscore inside a prefix is literal", store.PaymentFilter{Search: "0xa_aa"}, []int{}},
			{"backslash is literal", store.PaymentFilter{Search: `0xaa\`}, []int{}},
			{"invalid utf-8", store.PaymentFilter{Search: "0x\xff\xfe"}, []int{}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				ps, total := f.list(t, c.filter)
				want := c.want
				if c.filter.Limit == 0 {
					assert.EqualValues(t, len(want), total, "total")
				}
				assert.Equal(t, f.ids(want...), paymentIDs(ps))
			})
		}
		t.Run("short name with page total", func(t *testing.T) {
			_, total := f.list(t, store.PaymentFilter{Search: "shop", Limit: 2, Offset: 1})
			assert.EqualValues(t, 6, total)
		})

		// Search never crosses merchants.
		glob := func(search string) ([]uuid.UUID, int64) {
			ps, total := f.list(t, store.PaymentFilter{MerchantID: f.glob.ID, Search: search})
			return paymentIDs(ps), total
		}
		ids, total := glob(f.p[3].ID.String())
		assert.Zero(t, total, "another merchant's payment id")
		assert.Empty(t, ids)
		ids, total = glob("0xaaaa")
		assert.EqualValues(t, 1, total, "only globex's own address matches")
		assert.Equal(t, []uuid.UUID{f.globP[0].ID}, ids)
		ids, total = glob("0xfeed")
		assert.Zero(t, total, "another merchant's receipt")
		assert.Empty(t, ids)
		// glo_bex: a literal "_" is in the short name, a "%" is not.
		_, total = glob("_")
		assert.EqualValues(t, 2, total, "'_' is a substring of glo_bex")
		_, total = glob("o_b")
		assert.EqualValues(t, 2, total)
		_, total = glob("%")
		assert.Zero(t, total)
		_, total = glob("o%b")
		assert.Zero(t, total)
	})
}
