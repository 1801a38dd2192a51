package txmgr_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/chain"
	"github.com/paymentsd/paymentsd/devnet"
	"github.com/paymentsd/paymentsd/hotwallet"
	"github.com/paymentsd/paymentsd/internal/onchaintest"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/txmgr"
)

// rig is a transaction manager on a real database and a real devnet (manual blocks), signing
// with the devnet's funded hot wallet account.
type rig struct {
	t      *testing.T
	ctx    context.Context
	dn     *devnet.Devnet
	m      *txmgr.Manager
	native string // the native token's id (outgoing_txs.token_id)
}

func newRig(t *testing.T, backend string) *rig {
	ctx := context.Background()
	st, err := store.Open(testdb.URL(t, backend))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	log := onchaintest.Logger("TXMGR_TEST_LOG")
	require.NoError(t, st.Migrate(ctx, log))
	cat, err := st.Read(ctx).LoadCatalog()
	require.NoError(t, err)
	info, ok := cat.Chain(devnet.ChainID)
	require.True(t, ok)
	native, ok := cat.NativeToken(devnet.ChainID)
	require.True(t, ok)
	dn, err := devnet.Start(ctx, devnet.Config{Addr: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dn.Close() })
	cl, err := chain.Dial(ctx, devnet.ChainID, []string{dn.URL()}, chain.Options{Timeout: 5 * time.Second})
	require.NoError(t, err)
	key, err := devnet.AccountKey(devnet.HotWalletAccount)
	require.NoError(t, err)
	m := &txmgr.Manager{Chain: cl, Info: info, Wallet: hotwallet.FromKey(key), Store: st, Log: log, Now: time.Now,
		Config: txmgr.Config{BumpAfter: time.Hour, ResendAfter: time.Hour, GiveUpAfter: time.Hour}}
	require.NoError(t, m.CheckGenesis(ctx))
	return &rig{t: t, ctx: ctx, dn: dn, m: m, native: native.ID}
}

// transfer is a logical transaction paying wei to a fresh address from the hot wallet.
func (r *rig) transfer(wei int64) (*store.OutgoingTx, string) {
	k, err := crypto.GenerateKey()
	require.NoError(r.t, err)
	to := strings.ToLower(crypto.PubkeyToAddress(k.PublicKey).Hex())
	return &store.OutgoingTx{ID: uuid.Must(uuid.NewV7()), ChainID: devnet.ChainID, Kind: store.TxGasTopup,
		Sender: strings.ToLower(r.m.Wallet.Address().Hex()), TokenID: r.native, Recipient: to, AmountAsset: decimal.NewFromInt(wei),
		RateUSD: "0", TxTo: to, TxValue: decimal.NewFromInt(wei), GasLimit: 21_000, CreatedAt: time.Now()}, to
}

func (r *rig) balance(addr string) string {
	b, err := r.m.Chain.BalanceAt(r.ctx, common.HexToAddress(addr), nil)
	require.NoError(r.t, err)
	return b.String()
}

func (r *rig) open() []store.OutgoingTx {
	open, err := r.m.Store.Read(r.ctx).OpenOutgoingTxs(devnet.ChainID, "")
	require.NoError(r.t, err)
	return open
}

// followUntilDone mines and follows until nothing is in flight, counting the Final calls.
func (r *rig) followUntilDone(hooks txmgr.Hooks) {
	for range 40 {
		require.NoError(r.t, r.m.Follow(r.ctx, hooks))
		if len(r.open()) == 0 {
			return
		}
		r.dn.Commit()
	}
	r.t.Fatal("transactions still in flight after 40 blocks")
}

// A logical transaction is stored, with its owner's change, before anything reaches the chain;
// a failing owner's change leaves nothing (no nonce taken); the stored bytes are broadcast and
// followed to the chain's depth, where the owner's Final hook runs once, with the outcome.
func TestSignStoreBroadcastFollow(t *testing.T) {
	for _, backend := range testdb.Backends() {
		t.Run(backend, func(t *testing.T) {
			r := newRig(t, backend)
			o, _ := r.transfer(7)
			tip, feeCap, err := r.m.Fees(r.ctx)
			require.NoError(t, err)
			boom := errors.New("the owner's change failed")
			_, err = r.m.SignAndStore(r.ctx, o, tip, feeCap, func(*store.Tx) error { return boom })
			require.ErrorIs(t, err, boom)
			assert.Empty(t, r.open(), "nothing stored when the owner's change fails")

			o, to := r.transfer(1_000_000)
			along := 0
			a, err := r.m.SignAndStore(r.ctx, o, tip, feeCap, func(*store.Tx) error { along++; return nil })
			require.NoError(t, err)
			assert.Equal(t, 1, along)
			assert.Equal(t, int64(0), o.Nonce, "the rolled-back attempt took no nonce")
			stored := r.open()
			require.Len(t, stored, 1)
			assert.Equal(t, store.OutgoingSigned, stored[0].Status)
			assert.Equal(t, a.Hash, stored[0].Attempts[0].Hash)
			r.dn.Commit()
			assert.Equal(t, "0", r.balance(to), "stored, not yet broadcast")

			require.NoError(t, r.m.Broadcast(r.ctx, *o, a))
			var finals []txmgr.Final
			r.followUntilDone(txmgr.Hooks{Final: func(ctx context.Context, x store.OutgoingTx, f txmgr.Final, record txmgr.Record) error {
				finals = append(finals, f)
				return record(nil)
			}})
			require.Len(t, finals, 1, "the owner hears of the end once")
			assert.True(t, finals[0].Succeeded)
			assert.Equal(t, a.Hash, finals[0].Hash)
			assert.Equal(t, "1000000", r.balance(to))
			require.NoError(t, r.m.Follow(r.ctx, txmgr.Hooks{Final: func(context.Context, store.OutgoingTx, txmgr.Final, txmgr.Record) error {
				t.Fatal("a settled transaction settled again")
				return nil
			}}))
		})
	}
}

// A transaction stuck below the base fee is replaced at the same nonce by a bump of at least
// +12.5 %; whichever attempt is mined settles it, and the recipient is paid once.
func TestStuckTransactionIsBumped(t *testing.T) {
	r := newRig(t, "sqlite")
	o, to := r.transfer(5_000)
	a, err := r.m.SignAndStore(r.ctx, o, big.NewInt(1), big.NewInt(3), func(*store.Tx) error { return nil })
	require.NoError(t, err)
	require.NoError(t, r.m.Broadcast(r.ctx, *o, a))
	r.dn.Commit()
	r.dn.Commit()
	require.NoError(t, r.m.Follow(r.ctx, txmgr.Hooks{}))
	require.Len(t, r.open()[0].Attempts, 1, "not bumped before BumpAfter")
	assert.Equal(t, "0", r.balance(to), "a fee cap under the base fee is not mined")

	r.m.Config.BumpAfter = 0
	require.NoError(t, r.m.Follow(r.ctx, txmgr.Hooks{}))
	r.m.Config.BumpAfter = time.Hour
	attempts := r.open()[0].Attempts
	require.Len(t, attempts, 2, "bumped")
	second := attempts[1]
	assert.True(t, second.TipCap.BigInt().Cmp(txmgr.MinBump(big.NewInt(1))) >= 0)
	assert.True(t, second.FeeCap.BigInt().Cmp(txmgr.MinBump(big.NewInt(3))) >= 0)

	var finals []txmgr.Final
	r.followUntilDone(txmgr.Hooks{Final: func(ctx context.Context, x store.OutgoingTx, f txmgr.Final, record txmgr.Record) error {
		finals = append(finals, f)
		return record(nil)
	}})
	require.Len(t, finals, 1)
	assert.Equal(t, second.Hash, finals[0].Hash, "the replacement was mined")
	assert.Equal(t, "5000", r.balance(to), "paid once")
}
