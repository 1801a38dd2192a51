package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
)

// guardTest drives a paymentSecretGuard over a fake store of payments (id → secret), counting
// the lookups, with Echo's client-address extraction configured as server.New does.
type guardTest struct {
	t       *testing.T
	e       *echo.Echo
	g       *paymentSecretGuard
	secrets map[string]string
	lookups int
}

func newGuardTest(t *testing.T, trusted ...netip.Prefix) *guardTest {
	gt := &guardTest{t: t, e: echo.New(), secrets: map[string]string{}}
	gt.e.IPExtractor = clientIPExtractor(trusted)
	gt.g = newGuard(func(_ context.Context, id, secret string) (domain.Payment, error) {
		gt.lookups++
		if s, ok := gt.secrets[id]; ok && s == secret {
			return domain.Payment{ID: uuid.MustParse(id)}, nil
		}
		return domain.Payment{}, domain.ErrPaymentNotFound
	})
	return gt
}

func (gt *guardTest) payment() (id, secret string) {
	id, secret = uuid.NewString(), "ps_"+uuid.NewString()
	gt.secrets[id] = secret
	return id, secret
}

// open sends a payment-secret API request from peer (with X-Forwarded-For when xff is set) and
// returns the guard's answer as a status and the Retry-After header.
func (gt *guardTest) open(peer, xff, id, secret string) (int, string) {
	req := httptest.NewRequest(http.MethodGet, paymentSecretPrefix+id, nil)
	req.RemoteAddr = peer + ":40000"
	req.Header.Set(paymentSecretHeader, secret)
	if xff != "" {
		req.Header.Set(echo.HeaderXForwardedFor, xff)
	}
	rec := httptest.NewRecorder()
	c := gt.e.NewContext(req, rec)
	_, err := gt.g.open(c)
	retry := rec.Header().Get("Retry-After")
	var limited *rateLimitedError
	switch {
	case err == nil:
		assert.Empty(gt.t, retry)
		return http.StatusOK, retry
	case errors.As(err, &limited):
		assert.NotEmpty(gt.t, retry, "a 429 says when to retry")
		return http.StatusTooManyRequests, retry
	case errors.Is(err, domain.ErrPaymentNotFound):
		return http.StatusNotFound, retry
	}
	gt.t.Fatalf("unexpected error %v", err)
	return 0, ""
}

// A client that spent its failure budget (on any payments) still opens a payment whose secret it
// has: the limiter refuses failures, never a correct secret.
func TestGuardCorrectSecretAfterClientFailures(t *testing.T) {
	gt := newGuardTest(t)
	id, secret := gt.payment()
	for i := range 20 {
		status, _ := gt.open("198.51.100.7", "", uuid.NewString(), "ps_wrong")
		require.Equal(t, http.StatusNotFound, status, "failure %d is within the burst", i+1)
	}
	status, _ := gt.open("198.51.100.7", "", uuid.NewString(), "ps_wrong")
	assert.Equal(t, http.StatusTooManyRequests, status, "the client's failure budget is spent")
	status, _ = gt.open("198.51.100.7", "", id, secret+"x")
	assert.Equal(t, http.StatusTooManyRequests, status, "a wrong secret for a real payment too")
	status, _ = gt.open("198.51.100.7", "", id, secret)
	assert.Equal(t, http.StatusOK, status, "a correct secret from the same client is answered")
	status, _ = gt.open("198.51.100.8", "", uuid.NewString(), "ps_wrong")
	assert.Equal(t, http.StatusNotFound, status, "another client's budget is its own")
}

// A payment id's failures are limited whoever sends them: fresh client addresses do not buy a
// guesser more answers on one payment. Its own secret still opens it, and other payments are
// untouched.
func TestGuardPaymentFailureBudgetAcrossClients(t *testing.T) {
	gt := newGuardTest(t)
	id, secret := gt.payment()
	for i := range 20 {
		status, _ := gt.open("203.0.113."+strconv.Itoa(i+1), "", id, "ps_wrong")
		require.Equal(t, http.StatusNotFound, status, "failure %d is within the burst", i+1)
	}
	status, retry := gt.open("203.0.113.100", "", id, "ps_wrong")
	assert.Equal(t, http.StatusTooManyRequests, status, "a fresh client, the same payment id")
	wait, err := strconv.Atoi(retry)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, wait, 5, "one failure per 10 s per payment id, not the client's 1 s")
	status, _ = gt.open("203.0.113.101", "", id, secret)
	assert.Equal(t, http.StatusOK, status)
	other, _ := gt.payment()
	status, _ = gt.open("203.0.113.102", "", other, "ps_wrong")
	assert.Equal(t, http.StatusNotFound, status)
}

// An unknown payment and a wrong secret answer the same, 404 then 429, from the same budgets.
func TestGuardUnknownAndWrongAnswerAlike(t *testing.T) {
	run := func(known bool) []int {
		gt := newGuardTest(t)
		id := uuid.NewString()
		if known {
			id, _ = gt.payment()
		}
		var out []int
		for i := range 22 {
			status, _ := gt.open("192.0.2."+strconv.Itoa(i+1), "", id, "ps_wrong")
			out = append(out, status)
		}
		return out
	}
	assert.Equal(t, run(false), run(true))
}

// A refused failure spends nothing: a client limited by one payment id's budget keeps its own
// budget for others, and the other way round.
func TestGuardRefusedFailureSpendsNothing(t *testing.T) {
	gt := newGuardTest(t)
	id := uuid.NewString()
	for i := range 20 {
		gt.open("203.0.113."+strconv.Itoa(i+1), "", id, "ps_wrong")
	}
	for range 30 {
		status, _ := gt.open("198.51.100.9", "", id, "ps_wrong")
		require.Equal(t, http.StatusTooManyRequests, status)
	}
	for i := range 20 {
		status, _ := gt.open("198.51.100.9", "", uuid.NewString(), "ps_wrong")
		require.Equal(t, http.StatusNotFound, status, "failure %d of the client's own budget", i+1)
	}
}

// An opened payment's requests still have their budget (a page polling too fast); failures
// never spend it and it never limits failures.
func TestGuardPerPaymentRequestBudget(t *testing.T) {
	gt := newGuardTest(t)
	id, secret := gt.payment()
	for i := range 20 {
		status, _ := gt.open("198.51.100.1", "", id, secret)
		require.Equal(t, http.StatusOK, status, "request %d", i+1)
	}
	status, _ := gt.open("198.51.100.2", "", id, secret)
	assert.Equal(t, http.StatusTooManyRequests, status)
	status, _ = gt.open("198.51.100.3", "", id, "ps_wrong")
	assert.Equal(t, http.StatusNotFound, status, "a failure has budgets of its own")
}

// Nothing is looked up for a request that cannot open anything, and nothing is counted for it.
func TestGuardMalformedRequestsCostNothing(t *testing.T) {
	gt := newGuardTest(t)
	for range 30 {
		status, _ := gt.open("198.51.100.4", "", "not-a-uuid", "ps_x")
		require.Equal(t, http.StatusNotFound, status)
	}
	assert.Zero(t, gt.lookups)
	status, _ := gt.open("198.51.100.4", "", uuid.NewString(), "ps_x")
	assert.Equal(t, http.StatusNotFound, status, "the client's budget is whole")
}

// The client address behind X-Forwarded-For: honoured only from a configured proxy, read from
// the right, and Echo's default trust of loopback and private peers is off.
func TestClientIPExtractor(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}
	cases := []struct {
		name    string
		trusted []netip.Prefix
		peer    string
		xff     []string
		want    string
	}{
		{"no proxies: the peer", nil, "203.0.113.5:1", []string{"198.51.100.1"}, "203.0.113.5"},
		{"no proxies: loopback is no proxy", nil, "127.0.0.1:1", []string{"198.51.100.1"}, "127.0.0.1"},
		{"untrusted peer", trusted, "203.0.113.5:1", []string{"198.51.100.1"}, "203.0.113.5"},
		{"private peer not listed", trusted, "192.168.1.1:1", []string{"198.51.100.1"}, "192.168.1.1"},
		{"loopback peer not listed", trusted, "127.0.0.1:1", []string{"198.51.100.1"}, "127.0.0.1"},
		{"trusted peer", trusted, "10.1.2.3:1", []string{"198.51.100.1"}, "198.51.100.1"},
		{"client-written entries left of it ignored", trusted, "10.1.2.3:1", []string{"1.2.3.4, 198.51.100.1"}, "198.51.100.1"},
		{"a chain of proxies", trusted, "10.1.2.3:1", []string{"1.2.3.4, 198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"several headers", trusted, "10.1.2.3:1", []string{"1.2.3.4", "198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"IPv6 proxy", trusted, "[2001:db8::1]:1", []string{"2001:db8:ffff::1, 10.0.0.1", "2600::1"}, "2600::1"},
		{"garbage from the proxy: the proxy", trusted, "10.1.2.3:1", []string{"198.51.100.1, garbage"}, "10.1.2.3"},
		{"no header", trusted, "10.1.2.3:1", nil, "10.1.2.3"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				req.Header.Add(echo.HeaderXForwardedFor, v)
			}
			assert.Equal(t, tc.want, clientIPExtractor(tc.trusted)(req))
		})
	}
}

// Through the guard: XFF from an untrusted peer does not choose the failure budget; from a
// trusted one it does.
func TestGuardClientKeyFollowsTrustedProxies(t *testing.T) {
	spend := func(gt *guardTest, peer string) int {
		last := 0
		for i := range 21 {
			last, _ = gt.open(peer, "198.51.100."+strconv.Itoa(i+1), uuid.NewString(), "ps_wrong")
		}
		return last
	}
	assert.Equal(t, http.StatusTooManyRequests, spend(newGuardTest(t), "127.0.0.1"), "XFF from an untrusted peer is ignored")
	assert.Equal(t, http.StatusNotFound, spend(newGuardTest(t, netip.MustParsePrefix("127.0.0.1/32")), "127.0.0.1"),
		"each forwarded client has its own budget")
}

// An IPv6 client's failures are counted per /64: it cannot earn a fresh budget per address.
func TestGuardKeysIPv6ClientsByTheirSlash64(t *testing.T) {
	gt := newGuardTest(t, netip.MustParsePrefix("127.0.0.1/32"))
	last := 0
	for i := range 21 {
		last, _ = gt.open("127.0.0.1", "2001:db8:1:2::"+strconv.FormatInt(int64(i+1), 16), uuid.NewString(), "ps_wrong")
	}
	assert.Equal(t, http.StatusTooManyRequests, last, "21 addresses of one /64 share one budget")
	code, _ := gt.open("127.0.0.1", "2001:db8:1:3::1", uuid.NewString(), "ps_wrong")
	assert.Equal(t, http.StatusNotFound, code, "another /64 has its own")
}
