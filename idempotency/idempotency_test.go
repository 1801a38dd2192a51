package idempotency

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/store"
)

const op = "POST /v1/external/secretkey-auth/payments"

func hashHex(operation, body string) string {
	return hex.EncodeToString(RequestHash(operation, []byte(body)))
}

func TestRequestHashCanonicalisesEquivalentBodies(t *testing.T) {
	base := `{"amount":1000,"currency":"USD","orderId":"order-1"}`
	tests := []struct {
		name string
		body string
	}{
		{"reordered keys", `{"orderId":"order-1","currency":"USD","amount":1000}`},
		{"pretty printed", "{\n  \"amount\": 1000,\n  \"currency\": \"USD\",\n  \"orderId\": \"order-1\"\n}"},
		{"tabs and CRLF", "{\t\"currency\" :\t\"USD\",\r\n\"amount\" : 1000 , \"orderId\":\"order-1\"}"},
		{"leading and trailing whitespace", "  \n" + base + "\n\n"},
		{"unicode escape of the same string", `{"amount":1000,"currency":"\u0055SD","orderId":"order-1"}`},
	}
	want := hashHex(op, base)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, want, hashHex(op, tc.body))
		})
	}
}

func TestRequestHashNestedObjectsCanonicalised(t *testing.T) {
	a := `{"x":{"b":[1,{"d":2,"c":3}],"a":null},"y":true}`
	b := `{ "y" : true , "x" : { "a" : null , "b" : [ 1 , { "c" : 3 , "d" : 2 } ] } }`
	assert.Equal(t, hashHex(op, a), hashHex(op, b))
}

func TestRequestHashDistinguishesDifferentRequests(t *testing.T) {
	base := `{"amount":1000,"currency":"USD","orderId":"order-1"}`
	tests := []struct {
		name      string
		operation string
		body      string
	}{
		{"different amount", op, `{"amount":1001,"currency":"USD","orderId":"order-1"}`},
		{"different string", op, `{"amount":1000,"currency":"USD","orderId":"order-2"}`},
		{"missing field", op, `{"amount":1000,"currency":"USD"}`},
		{"extra field", op, `{"amount":1000,"currency":"USD","orderId":"order-1","type":"payment"}`},
		{"number vs string", op, `{"amount":"1000","currency":"USD","orderId":"order-1"}`},
		{"null vs absent", op, `{"amount":1000,"currency":"USD","orderId":"order-1","redirectUrl":null}`},
		{"different operation, same body", "POST /v1/external/secretkey-auth/withdrawals", base},
		{"operation text case matters", "post /v1/external/secretkey-auth/payments", base},
		{"empty operation", "", base},
	}
	want := hashHex(op, base)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.NotEqual(t, want, hashHex(tc.operation, tc.body))
		})
	}
}

func TestRequestHashArrayOrderMatters(t *testing.T) {
	assert.NotEqual(t, hashHex(op, `{"a":[1,2]}`), hashHex(op, `{"a":[2,1]}`))
}

// The body is decoded with UseNumber, so numbers are re-emitted with their original text: no
// float64 rounding merges distinct large values, and equal values written differently ("100"
// vs "1e2", "1000" vs "1000.0") hash differently. That is what the code does; it errs on the side
// of "different request" (a 409), never on replaying a response for a different request.
func TestRequestHashKeepsNumbersExact(t *testing.T) {
	assert.NotEqual(t, hashHex(op, `{"amount":9007199254740993}`), hashHex(op, `{"amount":9007199254740992}`),
		"2^53+1 and 2^53 are equal as float64 but must not collide")
	assert.NotEqual(t, hashHex(op, `{"amount":0.30000000000000001}`), hashHex(op, `{"amount":0.3}`))
	assert.NotEqual(t, hashHex(op, `{"amount":100}`), hashHex(op, `{"amount":1e2}`), "json.Number keeps the text")
	assert.NotEqual(t, hashHex(op, `{"amount":1000}`), hashHex(op, `{"amount":1000.0}`), "json.Number keeps the text")
	assert.Equal(t, hashHex(op, `{"amount":  1e2 }`), hashHex(op, `{"amount":1e2}`))
}

func TestRequestHashNonJSONBodiesHashRaw(t *testing.T) {
	// An undecodable body is hashed as sent: stable, and distinct from other bodies.
	assert.Equal(t, hashHex(op, "not json"), hashHex(op, "not json"))
	assert.NotEqual(t, hashHex(op, "not json"), hashHex(op, "not  json"))
	assert.NotEqual(t, hashHex(op, ""), hashHex(op, "{}"))
	assert.Equal(t, hashHex(op, ""), hashHex(op, ""))
}

func TestRequestHashIsSHA256Length(t *testing.T) {
	assert.Len(t, RequestHash(op, []byte(`{}`)), 32)
	assert.Len(t, RequestHash("", nil), 32)
}

// --- Keeper, on an embedded SQLite store ---

type fixture struct {
	k     *Keeper
	st    *store.Store
	m     uuid.UUID
	clock *time.Time
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "idem.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	require.NoError(t, st.Migrate(ctx, slog.New(slog.NewTextHandler(io.Discard, nil))))
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	m := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Acme", ShortName: "Acme", CreatedAt: now}
	require.NoError(t, st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(m) }))
	clock := &now
	return fixture{k: &Keeper{Store: st, TTL: time.Hour, Now: func() time.Time { return *clock }}, st: st, m: m.ID, clock: clock}
}

// run commits an effect guarded by g: a marker setting written in the same transaction as the
// key, so a test can see whether the effect and the key committed together.
func (f fixture) run(g *Guard, marker string, o Outcome, fail error) error {
	return f.st.InTx(context.Background(), func(tx *store.Tx) error {
		if err := g.Claim(tx); err != nil {
			return err
		}
		if err := tx.InsertSetting(marker, "effect"); err != nil {
			return err
		}
		if fail != nil {
			return fail // the effect fails after its key was claimed: both roll back
		}
		return g.Seal(tx, o)
	})
}

func (f fixture) req(key, body string) Request {
	return Request{MerchantID: f.m, Key: key, Operation: "/payments", Hash: RequestHash(op, []byte(body))}
}

func TestGuardCommitsWithTheEffectAndReplays(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.req("key-1", `{"a":1}`)

	out, err := f.k.Lookup(ctx, r)
	require.NoError(t, err)
	assert.Nil(t, out, "a new key has nothing to replay")

	require.NoError(t, f.run(f.k.Guard(r), "effect-1", Outcome{201, []byte(`{"ok":true}`)}, nil))

	out, err = f.k.Lookup(ctx, f.req("key-1", `{ "a" : 1 }`))
	require.NoError(t, err)
	require.NotNil(t, out, "same request (reformatted) replays")
	assert.Equal(t, 201, out.Status)
	assert.JSONEq(t, `{"ok":true}`, string(out.Body))

	_, err = f.k.Lookup(ctx, f.req("key-1", `{"a":2}`))
	assert.ErrorIs(t, err, ErrKeyReused, "a different request with the key is refused")

	err = f.run(f.k.Guard(r), "effect-2", Outcome{201, []byte(`{}`)}, nil)
	assert.ErrorIs(t, err, ErrDuplicate, "a second effect under the key cannot commit")
	_, err = f.st.Read(ctx).Setting("effect-2")
	assert.ErrorIs(t, err, store.ErrNotFound, "the duplicate's effect rolled back with it")
}

func TestGuardLeavesNothingWhenTheEffectFails(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	r := f.req("k", `{"a":1}`)
	boom := errors.New("database went away mid-transaction")
	require.ErrorIs(t, f.run(f.k.Guard(r), "effect-1", Outcome{}, boom), boom)

	out, err := f.k.Lookup(ctx, r)
	require.NoError(t, err)
	assert.Nil(t, out, "no key outlives a failed effect: the retry runs")
	_, err = f.st.Read(ctx).Setting("effect-1")
	assert.ErrorIs(t, err, store.ErrNotFound)

	require.NoError(t, f.run(f.k.Guard(f.req("k", `{"a":2}`)), "effect-2", Outcome{201, []byte(`{}`)}, nil),
		"after a failure the key is free, even for another body")
}

func TestRecordRefusalReplaysTheRefusalOrTheWinner(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	refusal := Outcome{409, []byte(`{"error":{}}`)}
	got, _, err := f.k.RecordRefusal(ctx, f.req("r", `{}`), refusal)
	require.NoError(t, err)
	assert.Equal(t, refusal, got)
	out, err := f.k.Lookup(ctx, f.req("r", `{}`))
	require.NoError(t, err)
	assert.Equal(t, &refusal, out, "the refusal replays")

	// A key an effect committed first wins over a later refusal of the same request.
	require.NoError(t, f.run(f.k.Guard(f.req("w", `{}`)), "effect", Outcome{201, []byte(`{"id":1}`)}, nil))
	got, _, err = f.k.RecordRefusal(ctx, f.req("w", `{}`), refusal)
	require.NoError(t, err)
	assert.Equal(t, 201, got.Status)
}

func TestKeeperExpiredKeyIsClaimedAfresh(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	require.NoError(t, f.run(f.k.Guard(f.req("k", `{"a":1}`)), "e1", Outcome{201, []byte(`{}`)}, nil))

	*f.clock = f.clock.Add(time.Hour) // expiresAt == now: expired
	out, err := f.k.Lookup(ctx, f.req("k", `{"a":2}`))
	require.NoError(t, err)
	assert.Nil(t, out, "an expired key is neither replayed nor a conflict")
	require.NoError(t, f.run(f.k.Guard(f.req("k", `{"a":2}`)), "e2", Outcome{201, []byte(`{"b":2}`)}, nil))
	out, err = f.k.Lookup(ctx, f.req("k", `{"a":2}`))
	require.NoError(t, err)
	require.NotNil(t, out)
	assert.JSONEq(t, `{"b":2}`, string(out.Body))
}

func TestKeeperKeysAreScopedPerMerchant(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Other", ShortName: "Other", CreatedAt: *f.clock}
	require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(other) }))

	require.NoError(t, f.run(f.k.Guard(f.req("shared", `{"a":1}`)), "e1", Outcome{201, []byte(`{}`)}, nil))
	r := Request{MerchantID: other.ID, Key: "shared", Operation: "/payments", Hash: RequestHash(op, []byte(`{"a":2}`))}
	out, err := f.k.Lookup(ctx, r)
	require.NoError(t, err, "another merchant's identical key is independent")
	assert.Nil(t, out)
	require.NoError(t, f.run(f.k.Guard(r), "e2", Outcome{201, []byte(`{}`)}, nil))
}
