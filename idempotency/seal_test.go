package idempotency

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
)

func testSealer(t *testing.T, hexByte string) Sealer {
	t.Helper()
	key, err := webhooks.ParseKey(strings.Repeat(hexByte, 32))
	require.NoError(t, err)
	s, err := webhooks.NewAESSealer(key)
	require.NoError(t, err)
	return s
}

// fixtureOn is the keeper fixture on a fresh database of the backend, sealing with key "5e".
func fixtureOn(t *testing.T, backend string) fixture {
	t.Helper()
	st, err := store.Open(testdb.URL(t, backend))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	require.NoError(t, st.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	m := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Acme", ShortName: "Acme", CreatedAt: now}
	require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(m) }))
	clock := &now
	k := &Keeper{Store: st, TTL: time.Hour, Now: func() time.Time { return *clock }, Sealer: testSealer(t, "5e")}
	return fixture{k: k, st: st, m: m.ID, clock: clock}
}

func (f fixture) raw(t *testing.T, key string) []byte {
	t.Helper()
	rec, err := f.st.Read(context.Background()).GetIdempotencyKey(f.m, key)
	require.NoError(t, err)
	return rec.ResponseBody
}

// writeClear stores an answer the way versions before sealing did.
func (f fixture) writeClear(t *testing.T, r Request, o Outcome) {
	t.Helper()
	require.NoError(t, f.st.InTx(context.Background(), func(tx *store.Tx) error {
		now := f.k.Now()
		if err := tx.ClaimIdempotencyKey(store.IdempotencyRecord{MerchantID: r.MerchantID, Key: r.Key, Operation: r.Operation,
			RequestHash: r.Hash, ExpiresAt: now.Add(f.k.TTL)}, now); err != nil {
			return err
		}
		return tx.SealIdempotencyKey(r.MerchantID, r.Key, o.Status, o.Body)
	}))
}

const created = `{"secret":"ps_0123456789abcdef","paymentUrl":"https://pay.example/pay/1#secret=ps_0123456789abcdef"}`

func eachBackend(t *testing.T, fn func(t *testing.T, f fixture)) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) { fn(t, fixtureOn(t, b)) })
	}
}

// The stored answer is sealed: no secret in the row, and the replay is the answer sent.
func TestStoredAnswerIsSealedAndReplays(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		r := f.req("k", `{"a":1}`)
		require.NoError(t, f.run(f.k.Guard(r), "e1", Outcome{201, []byte(created)}, nil))
		stored := f.raw(t, "k")
		assert.True(t, bytes.HasPrefix(stored, []byte(sealedPrefix)))
		assert.False(t, bytes.Contains(stored, []byte("ps_")), "no secret in clear: %s", stored)
		out, err := f.k.Lookup(context.Background(), r)
		require.NoError(t, err)
		require.NotNil(t, out)
		assert.Equal(t, Outcome{201, []byte(created)}, *out)
	})
}

// Under another secrets key the answer does not open: the documented refusal (a kind of
// ErrKeyInUse, 409), never a replay of garbage and never a second effect.
func TestAnswerUnderAnotherSecretsKeyIsUnreadable(t *testing.T) {
	f := newFixture(t)
	f.k.Sealer = testSealer(t, "5e")
	r := f.req("k", `{"a":1}`)
	require.NoError(t, f.run(f.k.Guard(r), "e1", Outcome{201, []byte(created)}, nil))

	var logged bytes.Buffer
	other := &Keeper{Store: f.st, TTL: time.Hour, Now: f.k.Now, Sealer: testSealer(t, "a7"), Log: slog.New(slog.NewTextHandler(&logged, nil))}
	_, err := other.Lookup(context.Background(), r)
	assert.ErrorIs(t, err, ErrReplayUnreadable)
	assert.ErrorIs(t, err, ErrKeyInUse)
	assert.Contains(t, logged.String(), "cannot be opened")
	err = f.st.InTx(context.Background(), func(tx *store.Tx) error { return other.Guard(r).Claim(tx) })
	assert.ErrorIs(t, err, ErrDuplicate, "the key stays taken: the request is not run again")
	_, _, err = other.RecordRefusal(context.Background(), r, Outcome{409, []byte(`{}`)})
	assert.ErrorIs(t, err, ErrReplayUnreadable)
}

// A sealed answer opens only for its own merchant: copied into another merchant's key with the same
// request, it is refused.
func TestSealedAnswerIsBoundToItsMerchant(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Other", ShortName: "Other", CreatedAt: *f.clock}
	require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(other) }))
	mine := f.req("k", `{"a":1}`)
	theirs := Request{MerchantID: other.ID, Key: "k", Operation: mine.Operation, Hash: mine.Hash}
	require.NoError(t, f.run(f.k.Guard(mine), "e1", Outcome{201, []byte(created)}, nil))
	require.NoError(t, f.run(f.k.Guard(theirs), "e2", Outcome{201, []byte(`{}`)}, nil))
	rec, err := f.st.Read(ctx).GetIdempotencyKey(other.ID, "k")
	require.NoError(t, err)
	copied := f.raw(t, "k")
	require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error {
		ok, err := tx.ReplaceIdempotencyBody(other.ID, "k", rec.ResponseBody, copied)
		assert.True(t, ok)
		return err
	}))
	_, err = f.k.Lookup(ctx, theirs)
	assert.ErrorIs(t, err, ErrReplayUnreadable)
}

// Without a configured key, answers are sealed with a key of the process's own: never stored
// in clear; another process cannot open them.
func TestWithoutASecretsKeyAnswersAreSealedWithAProcessKey(t *testing.T) {
	f := newFixture(t)
	r := f.req("k", `{"a":1}`)
	require.NoError(t, f.run(f.k.Guard(r), "e1", Outcome{201, []byte(created)}, nil))
	assert.False(t, bytes.Contains(f.raw(t, "k"), []byte("ps_")))
	out, err := f.k.Lookup(context.Background(), r)
	require.NoError(t, err)
	assert.Equal(t, created, string(out.Body))
	restarted := &Keeper{Store: f.st, TTL: time.Hour, Now: f.k.Now}
	_, err = restarted.Lookup(context.Background(), r)
	assert.ErrorIs(t, err, ErrReplayUnreadable)
}

// Answers an earlier version stored in clear still replay, and are sealed in place by the
// sweeper's pass (in pages: more than one page here); expired ones are purged by the same pass.
func TestClearAnswersOfAnEarlierVersionAreSealedInPlace(t *testing.T) {
	eachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		const n = 205
		for i := range n {
			f.writeClear(t, f.req(fmt.Sprintf("old-%03d", i), `{"a":1}`), Outcome{201, []byte(created)})
		}
		out, err := f.k.Lookup(ctx, f.req("old-000", `{"a":1}`))
		require.NoError(t, err)
		assert.Equal(t, created, string(out.Body), "a clear answer replays as it is")
		sealedAlready := f.req("new", `{"a":1}`)
		require.NoError(t, f.run(f.k.Guard(sealedAlready), "e1", Outcome{201, []byte(created)}, nil))
		before := f.raw(t, "new")
		expired := Request{MerchantID: f.m, Key: "expired", Operation: "/payments", Hash: RequestHash(op, []byte(`{}`))}
		*f.clock = f.clock.Add(-2 * time.Hour)
		f.writeClear(t, expired, Outcome{201, []byte(created)})
		*f.clock = f.clock.Add(2 * time.Hour)

		require.NoError(t, f.k.SweepOnce(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))), "the sweeper's first pass")

		for i := range n {
			key := fmt.Sprintf("old-%03d", i)
			assert.False(t, bytes.Contains(f.raw(t, key), []byte("ps_")), key)
		}
		out, err = f.k.Lookup(ctx, f.req("old-000", `{"a":1}`))
		require.NoError(t, err)
		assert.Equal(t, Outcome{201, []byte(created)}, *out, "and replays the same")
		assert.Equal(t, before, f.raw(t, "new"), "a sealed answer is not sealed again")
		_, err = f.st.Read(ctx).GetIdempotencyKey(f.m, "expired")
		assert.ErrorIs(t, err, store.ErrNotFound, "an expired key is purged, not sealed")
		got, err := f.k.SealClearAnswers(ctx)
		require.NoError(t, err)
		assert.Zero(t, got, "nothing left to seal")
	})
}
