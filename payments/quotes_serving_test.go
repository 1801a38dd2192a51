package payments

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/pricing"
)

// twoTestChains is a catalogue of two enabled test chains with their native ETH.
func twoTestChains() domain.Catalog {
	cat := domain.Catalog{Tokens: map[string]domain.Token{}}
	for _, id := range []int64{1337, 84532} {
		c := domain.Chain{ID: id, Name: "test chain", NativeSymbol: "ETH", NativeDecimals: 18, IsTestnet: true, Enabled: true, RequiredConfirmations: 1}
		cat.Chains = append(cat.Chains, c)
		tid := fmt.Sprintf("eip155:%d/slip44:60", id)
		cat.Tokens[tid] = domain.Token{ID: tid, Chain: c, Symbol: "ETH", MarketAPIID: "ethereum", Decimals: 18,
			Type: domain.Volatile, AssetType: domain.Native, Status: domain.TokenActive}
	}
	return cat
}

func TestQuotesLeaveOutChainsNotServing(t *testing.T) {
	serving := map[int64]bool{1337: true, 84532: false}
	s := &Service{Catalog: twoTestChains(), Prices: pricing.Pegged{Volatile: pricing.DefaultStatic()}, QuoteTTL: time.Minute,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), ChainServing: func(id int64) bool { return serving[id] }}
	newPayment := func() *domain.Payment {
		return &domain.Payment{ID: uuid.Must(uuid.NewV7()), Mode: domain.ModeTest, Type: domain.TypePayment, AmountInCents: 1000}
	}
	now := time.Now()

	p := newPayment()
	require.NoError(t, s.buildQuotes(context.Background(), p, domain.AcceptedAssets{}, now))
	require.Len(t, p.Quotes, 1)
	assert.Equal(t, int64(1337), p.Quotes[0].Token.Chain.ID, "the chain that is down is not quoted")

	serving[84532] = true // it answers again
	p = newPayment()
	require.NoError(t, s.buildQuotes(context.Background(), p, domain.AcceptedAssets{}, now))
	assert.Len(t, p.Quotes, 2)

	serving[1337], serving[84532] = false, false
	require.ErrorIs(t, s.buildQuotes(context.Background(), newPayment(), domain.AcceptedAssets{}, now), domain.ErrNoQuotableTokens)

	s.ChainServing = nil // a process that knows nothing of the chains' health quotes by the catalogue
	p = newPayment()
	require.NoError(t, s.buildQuotes(context.Background(), p, domain.AcceptedAssets{}, now))
	assert.Len(t, p.Quotes, 2)
}
