package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymentsd/paymentsd/gen/client"
	"github.com/paymentsd/paymentsd/webhooks"
)

// The example verifies what paymentsd signs, acts once per webhook-id, and refuses forgeries.
func TestExampleReceiver(t *testing.T) {
	secret, err := webhooks.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	var handled []string
	h, err := newHandler(secret, func(ev client.WebhookEvent, kind string) {
		w, err := ev.AsWithdrawalWebhookEvent()
		if err != nil || w.Data.Object.Status == "" {
			t.Errorf("decode: %v %+v", err, w)
		}
		handled = append(handled, kind)
	})
	if err != nil {
		t.Fatal(err)
	}
	object := []byte(`{"id":"01a20a17-9c3e-7b45-8d21-6f0e4a2b9c30","merchantId":"01a200eb-1612-72e6-88d9-02e7cbd1f728",` +
		`"amountInCents":5000,"chainId":"eip155:8453","recipientAddress":"0x9858effd232b4033e47d90003d41ec34ecaeda94",` +
		`"status":"completed","currency":"USD","errorMessage":null,"receipt":null,"createdAt":"2026-11-22T11:00:00Z","updatedAt":"2026-11-22T11:00:00Z"}`)
	body, err := webhooks.EncodeBody("evt_01a2028e4f6a7b8c9d0e1f2a3b4c5d6f", "withdrawal.completed", time.Now(), object)
	if err != nil {
		t.Fatal(err)
	}
	send := func(secret string, at time.Time, body []byte) int {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := wh.Sign("evt_01a2028e4f6a7b8c9d0e1f2a3b4c5d6f", at, body)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("webhook-id", "evt_01a2028e4f6a7b8c9d0e1f2a3b4c5d6f")
		req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
		req.Header.Set("webhook-signature", sig)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if c := send(secret, time.Now(), body); c != http.StatusNoContent {
		t.Fatalf("a signed event: %d", c)
	}
	if c := send(secret, time.Now(), body); c != http.StatusNoContent || len(handled) != 1 {
		t.Fatalf("a retry with the same id is acknowledged and not acted on again: %d, handled %v", c, handled)
	}
	other, _ := webhooks.NewSecret()
	if c := send(other, time.Now(), body); c != http.StatusUnauthorized {
		t.Fatalf("another secret: %d", c)
	}
	if c := send(secret, time.Now().Add(-10*time.Minute), body); c != http.StatusUnauthorized {
		t.Fatalf("a stale timestamp: %d", c)
	}
}
