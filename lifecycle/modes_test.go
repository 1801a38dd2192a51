package lifecycle_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/lifecycle"
	"github.com/paymentsd/paymentsd/store"
)

// Faucet money sent to a live payment's address (one EVM address is valid on every chain) is
// test money: credited to the test balance and announced to test endpoints only — the live
// integration never hears of it as a credit.
func TestLateTransferIsItsChainsMoney(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, backend)
			p := f.newPayment(t) // quoted on Base: live
			_, err := f.core.UpdatePayment(ctx, p.ID, movePayment(domain.PaymentCompleted))
			require.NoError(t, err)
			liveBefore := f.modeBalance(t, domain.ModeLive)
			require.Positive(t, liveBefore)

			devETH, ok := f.cat.AcceptedToken(1337, "ETH")
			require.True(t, ok)
			tr := store.Transfer{ID: uuid.Must(uuid.NewV7()), ChainID: 1337, TxHash: "0x" + uuid.NewString()[:8], LogIndex: -1, BlockNumber: 1,
				BlockHash: "0xb", BlockTime: t0, TokenID: devETH.ID, From: "0x1", To: p.DepositAddress.Address,
				Amount: decimal.NewFromInt(1), DepositAddressID: p.DepositAddress.ID, PaymentID: &p.ID, Status: store.TransferConfirmed,
				CreatedAt: t0, UpdatedAt: t0}
			require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.RecordTransfer(tr); err != nil {
					return err
				}
				_, err := f.core.CreditTransferTx(tx, p.ID, tr.ID, 50_000, lifecycle.TransferNote{ChainID: "eip155:1337", TxHash: tr.TxHash,
					LogIndex: -1, TokenID: devETH.ID, AmountAsset: "1", Reason: "unquoted_token"})
				return err
			}))
			assert.Equal(t, liveBefore, f.modeBalance(t, domain.ModeLive), "nothing reached the live balance")
			assert.EqualValues(t, 50_000, f.modeBalance(t, domain.ModeTest))
			evs := f.events(t, p.ID)
			last := evs[len(evs)-1]
			require.Equal(t, domain.EventPaymentLateTransfer, last.Type)
			assert.Equal(t, domain.ModeTest, last.Mode, "announced to the endpoints of the money's mode")
			var payload struct {
				Transfer struct {
					Livemode *bool `json:"livemode"`
				} `json:"transfer"`
			}
			require.NoError(t, json.Unmarshal(last.Payload, &payload))
			require.NotNil(t, payload.Transfer.Livemode)
			assert.False(t, *payload.Transfer.Livemode, "the note says which balance was credited")
		})
	}
}

func (f fixture) modeBalance(t *testing.T, mode domain.Mode) int64 {
	t.Helper()
	b, err := f.st.Read(context.Background()).AvailableBalance(f.merchant.ID, mode)
	require.NoError(t, err)
	return b
}
