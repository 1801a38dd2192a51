package main

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/withdrawals"
)

// createWithdrawal funds the merchant (a settled payment) and creates a pending withdrawal.
func createWithdrawal(t *testing.T, db, merchantID string, cents int64) domain.Withdrawal {
	t.Helper()
	p := createPayment(t, db, merchantID, 10_000, payments.TypePayment)
	cliJSON(t, "payments", "settle", "--database-url", db, "--payment", p.ID.String(), "--tx-hash", txHash("ab"), "--json")
	a := openApp(t, db)
	ctx := context.Background()
	m, err := a.Store.Read(ctx).GetMerchant(uuid.MustParse(merchantID))
	require.NoError(t, err)
	m.Mode = domain.ModeLive // createPayment's payments are live: so is the balance this spends
	w, err := a.Withdrawals.Create(ctx, m, withdrawals.CreateInput{AmountInCents: cents, ChainID: 8453,
		RecipientAddress: "0x5aeda56215b167893e80b4fe645ba6d5bab767de"}, nil)
	require.NoError(t, err)
	a.Close()
	return w
}

func balanceOf(t *testing.T, db, merchantID string) int64 {
	t.Helper()
	a := openApp(t, db)
	defer a.Close()
	b, err := a.Store.Read(context.Background()).AvailableBalance(uuid.MustParse(merchantID), domain.ModeLive)
	require.NoError(t, err)
	return b
}

func TestWithdrawalsCancel(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db, "--withdrawals")["merchantId"].(string)
	w := createWithdrawal(t, db, mid, 2_500)
	before := balanceOf(t, db, mid)

	out := cliJSON(t, "withdrawals", "cancel", "--database-url", db, "--withdrawal", w.ID.String(), "--json")
	assert.Equal(t, w.ID.String(), out["withdrawalId"])
	assert.EqualValues(t, "cancelled", out["status"])
	assert.EqualValues(t, 2_500, out["restoredCents"])
	assert.Equal(t, before+2_500, balanceOf(t, db, mid), "the reversal restores the balance")

	_, _, err := cli(t, "withdrawals", "cancel", "--database-url", db, "--withdrawal", w.ID.String())
	var te *domain.TransitionError
	require.ErrorAs(t, err, &te, "a cancelled withdrawal cannot be cancelled again")
	assert.Equal(t, before+2_500, balanceOf(t, db, mid), "restored once")

	_, _, err = cli(t, "withdrawals", "cancel", "--database-url", db, "--withdrawal", uuid.NewString())
	assert.ErrorIs(t, err, domain.ErrWithdrawalNotFound)
	_, _, err = cli(t, "withdrawals", "cancel", "--database-url", db)
	assert.ErrorIs(t, err, errUsage)

	a := openApp(t, db)
	evs, err := a.Store.Read(context.Background()).EntityEvents(w.ID)
	require.NoError(t, err)
	a.Close()
	require.Len(t, evs, 2)
	assert.Equal(t, []domain.EventType{"withdrawal.created", "withdrawal.cancelled"}, []domain.EventType{evs[0].Type, evs[1].Type})
}

// An operator's retry with the same idempotency key replays the first result instead of
// failing on "already cancelled"; the same key with other flags is refused.
func TestOperatorCommandsAreIdempotent(t *testing.T) {
	db := cliEnv(t)
	mid := createMerchant(t, db, "--withdrawals")["merchantId"].(string)
	w := createWithdrawal(t, db, mid, 1_000)
	args := []string{"withdrawals", "cancel", "--database-url", db, "--withdrawal", w.ID.String(), "--idempotency-key", "ops-1", "--json"}
	first, _, err := cli(t, args...)
	require.NoError(t, err)
	again, stderr, err := cli(t, args...)
	require.NoError(t, err, "the retry replays")
	assert.Equal(t, first, again, "byte for byte")
	assert.Contains(t, stderr, "already done under this idempotency key")

	other := createWithdrawal(t, db, mid, 500)
	_, _, err = cli(t, "withdrawals", "cancel", "--database-url", db, "--withdrawal", other.ID.String(), "--idempotency-key", "ops-1")
	assert.Error(t, err, "the key was used for another withdrawal")
	assert.Equal(t, domain.WithdrawalPending, withdrawalStatus(t, db, mid, other.ID))

	p := createPayment(t, db, mid, 1_000, payments.TypePayment)
	settle := []string{"payments", "settle", "--database-url", db, "--payment", p.ID.String(), "--tx-hash", txHash("cd"), "--idempotency-key", "ops-2", "--json"}
	s1, _, err := cli(t, settle...)
	require.NoError(t, err)
	s2, _, err := cli(t, settle...)
	require.NoError(t, err)
	assert.Equal(t, s1, s2)
}

func withdrawalStatus(t *testing.T, db, merchantID string, id uuid.UUID) domain.WithdrawalStatus {
	t.Helper()
	a := openApp(t, db)
	defer a.Close()
	w, err := a.Withdrawals.Get(context.Background(), domain.Merchant{ID: uuid.MustParse(merchantID), Mode: domain.ModeLive}, id.String())
	require.NoError(t, err)
	return w.Status
}
