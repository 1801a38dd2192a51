package webhooks_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
)

// Endpoints on the gateway's own network are refused at creation, and nothing is stored.
func TestUnsafeURLsAreRefusedAtCreation(t *testing.T) {
	f := newFixture(t, "sqlite")
	f.a.Webhooks.Guard = webhooks.Guard{} // production: https only, public addresses only
	for _, u := range []string{
		"https://127.0.0.1/hooks",
		"https://10.0.0.1/hooks",
		"https://169.254.169.254/latest/meta-data",
		"https://[::1]/hooks",
		"https://[fd00::1]/hooks",
		"https://100.64.0.1/hooks",
		"https://localhost/hooks", // a name that resolves to loopback
		"http://93.184.216.34/hooks",
		"https://user:pass@93.184.216.34/hooks",
		"not a url",
	} {
		_, err := f.a.Webhooks.Create(f.ctx, f.merchant.ID, f.merchant.Mode, u, nil)
		assert.ErrorIs(t, err, webhooks.ErrUnsafeURL, u)
	}
	eps, err := f.a.Webhooks.List(f.ctx, f.merchant.ID)
	require.NoError(t, err)
	assert.Empty(t, eps)
	_, err = f.a.Webhooks.Create(f.ctx, f.merchant.ID, f.merchant.Mode, "https://93.184.216.34/hooks", []string{"payment.nope"})
	assert.ErrorIs(t, err, webhooks.ErrUnknownEventType)
	c, err := f.a.Webhooks.Create(f.ctx, f.merchant.ID, f.merchant.Mode, "https://93.184.216.34/hooks", []string{"payment.completed"})
	require.NoError(t, err, "a public address over https is fine")
	assert.Regexp(t, `^whsec_[A-Za-z0-9+/]{43}=$`, c.Secret)
}

func TestPublicAddresses(t *testing.T) {
	for ip, public := range map[string]bool{"8.8.8.8": true, "2606:4700::1111": true, "127.0.0.1": false, "::ffff:10.1.2.3": false,
		"172.16.0.1": false, "192.168.1.1": false, "169.254.169.254": false, "0.0.0.0": false, "224.0.0.1": false, "::": false,
		"fe80::1": false, "64:ff9b::a00:1": false, "198.18.0.1": false, "::127.0.0.1": false, "2002:a00:1::1": false,
		"2001:0:4136:e378::1": false, "fec0::1": false} {
		assert.Equal(t, public, webhooks.Public(netip.MustParseAddr(ip)), ip)
	}
}

// At connection time too (a name can resolve elsewhere after the endpoint was made: DNS
// rebinding): the dialer refuses a non-public address, and the attempt is logged as failed.
func TestUnsafeAddressRefusedAtConnection(t *testing.T) {
	f := newFixture(t, "sqlite", 0, time.Hour)
	r := newReceiver(t)
	f.endpoint(r.srv.URL) // allowed when made (development flag)
	strict := f.dispatcher(f.a.Dispatcher.Holder, webhooks.Guard{})
	f.pay(2500)
	_, err := strict.Round(context.Background())
	require.NoError(t, err)
	assert.Empty(t, r.requests(), "nothing reached the loopback receiver")
	ds, err := f.a.Webhooks.Deliveries(f.ctx, store.DeliveryFilter{MerchantID: f.merchant.ID, Limit: 5})
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Len(t, ds[0].Log, 1)
	assert.Nil(t, ds[0].Log[0].StatusCode)
	assert.Contains(t, *ds[0].Log[0].Error, "non-public address")
	assert.Equal(t, store.DeliveryPending, ds[0].Status, "retried later, on the schedule")
}
