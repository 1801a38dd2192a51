package idempotency

import (
	"context"
	"encoding/hex"
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

func TestKeeperClaimCompleteReplay(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h := RequestHash(op, []byte(`{"a":1}`))

	replay, err := f.k.Claim(ctx, f.m, "key-1", "/payments", h)
	require.NoError(t, err)
	assert.Nil(t, replay, "first claim owns the key")

	_, err = f.k.Claim(ctx, f.m, "key-1", "/payments", h)
	assert.ErrorIs(t, err, ErrKeyInUse, "same request while the first still runs")

	_, err = f.k.Claim(ctx, f.m, "key-1", "/payments", RequestHash(op, []byte(`{"a":2}`)))
	assert.ErrorIs(t, err, ErrKeyReused, "different request with the key")

	require.NoError(t, f.k.Complete(ctx, f.m, "key-1", 201, []byte(`{"ok":true}`)))
	replay, err = f.k.Claim(ctx, f.m, "key-1", "/payments", RequestHash(op, []byte(`{ "a" : 1 }`)))
	require.NoError(t, err)
	require.NotNil(t, replay)
	assert.Equal(t, 201, replay.Status)
	assert.JSONEq(t, `{"ok":true}`, string(replay.Body))

	_, err = f.k.Claim(ctx, f.m, "key-1", "/payments", RequestHash(op, []byte(`{"a":2}`)))
	assert.ErrorIs(t, err, ErrKeyReused, "a completed key still refuses a different request")
}

func TestKeeperReleaseLetsARetryRun(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	h := RequestHash(op, []byte(`{"a":1}`))
	replay, err := f.k.Claim(ctx, f.m, "k", "/payments", h)
	require.NoError(t, err)
	require.Nil(t, replay)
	require.NoError(t, f.k.Release(ctx, f.m, "k"))

	replay, err = f.k.Claim(ctx, f.m, "k", "/payments", RequestHash(op, []byte(`{"a":2}`)))
	require.NoError(t, err, "a released key can be claimed again, even for another body")
	assert.Nil(t, replay)
}

func TestKeeperExpiredKeyIsClaimedAfresh(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.k.Claim(ctx, f.m, "k", "/payments", RequestHash(op, []byte(`{"a":1}`)))
	require.NoError(t, err)
	require.NoError(t, f.k.Complete(ctx, f.m, "k", 201, []byte(`{}`)))

	*f.clock = f.clock.Add(time.Hour) // expiresAt == now: expired
	replay, err := f.k.Claim(ctx, f.m, "k", "/payments", RequestHash(op, []byte(`{"a":2}`)))
	require.NoError(t, err)
	assert.Nil(t, replay, "the expired key is reclaimed, not replayed")

	_, err = f.k.Claim(ctx, f.m, "k", "/payments", RequestHash(op, []byte(`{"a":2}`)))
	assert.ErrorIs(t, err, ErrKeyInUse)
}

func TestKeeperKeysAreScopedPerMerchant(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other := domain.Merchant{ID: uuid.Must(uuid.NewV7()), Name: "Other", ShortName: "Other", CreatedAt: *f.clock}
	require.NoError(t, f.st.InTx(ctx, func(tx *store.Tx) error { return tx.CreateMerchant(other) }))

	_, err := f.k.Claim(ctx, f.m, "shared", "/payments", RequestHash(op, []byte(`{"a":1}`)))
	require.NoError(t, err)
	replay, err := f.k.Claim(ctx, other.ID, "shared", "/payments", RequestHash(op, []byte(`{"a":2}`)))
	require.NoError(t, err, "another merchant's identical key is independent")
	assert.Nil(t, replay)
}
