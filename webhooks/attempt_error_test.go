package webhooks_test

import (
	"context"
	"encoding/binary"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
)

// fakeDNS is a DNS server on loopback UDP answering every A question with addr (and every other
// question with no records); it counts the questions it answered.
type fakeDNS struct {
	conn    net.PacketConn
	queries atomic.Int64
}

func newFakeDNS(t *testing.T, addr net.IP) *fakeDNS {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = pc.Close() })
	d := &fakeDNS{conn: pc}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := answer(buf[:n], addr.To4()); resp != nil {
				d.queries.Add(1)
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	return d
}

// answer builds the response to one query (RFC 1035 §4.1), or nil for what it cannot parse.
func answer(q []byte, ip net.IP) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 { // the question's name, label by label
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4 : end-2])
	resp := append([]byte{}, q[:2]...)                      // ID
	resp = append(resp, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0) // response, recursion available, NOERROR, QDCOUNT 1
	resp = append(resp, q[12:end]...)
	if qtype == 1 { // A
		resp[7] = 1 // ANCOUNT
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, ip...)
	}
	return resp
}

// The delivery log (shown by the dashboard and `paymentsd webhooks deliveries`) says that the
// endpoint's host resolved to a non-public address, never which: a dashboard user must not map
// the gateway's internal network with names that resolve into it.
func TestRefusedConnectionDoesNotNameTheInternalAddress(t *testing.T) {
	f := newFixture(t, "sqlite", 0, time.Hour)
	dns := newFakeDNS(t, net.IPv4(10, 20, 30, 40))
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", dns.conn.LocalAddr().String())
	}}
	f.endpoint("http://hooks.internal.example:8080/hooks") // allowed when made (development flag)
	strict := f.dispatcher(f.a.Dispatcher.Holder, webhooks.Guard{AllowHTTP: true, Resolver: resolver})
	f.pay(2500)
	_, err := strict.Round(context.Background())
	require.NoError(t, err)
	assert.Positive(t, dns.queries.Load(), "the host was resolved by the guard's resolver")

	ds, err := f.a.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, Limit: 5})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Len(t, ds[0].Log, 1)
	require.NotNil(t, ds[0].Log[0].Error)
	msg := *ds[0].Log[0].Error
	assert.Contains(t, msg, "hooks.internal.example resolved to a non-public address")
	assert.NotContains(t, msg, "10.20.30.40")
	assert.NotContains(t, msg, "10.20.")
	assert.Equal(t, store.DeliveryPending, ds[0].Status, "retried later, on the schedule")

	// An attempt an earlier version recorded with the address is shown without it.
	db, err := f.a.Store.SQLDB()
	require.NoError(t, err)
	_, err = db.Exec(`UPDATE webhook_attempts SET error = ?`, `Post "http://hooks.internal.example:8080/hooks": dial tcp 10.20.30.40:8080: `+
		`webhook URL refused: the endpoint's host now resolves to 10.20.30.40, a non-public address`)
	require.NoError(t, err)
	ds, err = f.a.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, Limit: 5})
	require.NoError(t, err)
	require.NotNil(t, ds[0].Log[0].Error)
	assert.Contains(t, *ds[0].Log[0].Error, "non-public")
	assert.NotContains(t, *ds[0].Log[0].Error, "10.20.30.40")
}
