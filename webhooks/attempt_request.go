package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymentsd/paymentsd/store"
)

// Body is what a webhook posts: the event, with the object as GET returns it.
type Body struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"createdAt"`
	Data      struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

// EncodeBody encodes an event's webhook body.
func EncodeBody(id, typ string, createdAt time.Time, object []byte) ([]byte, error) {
	var b Body
	b.ID, b.Type, b.CreatedAt, b.Data.Object = id, typ, createdAt.UTC(), json.RawMessage(bytes.TrimSpace(object))
	return json.Marshal(b)
}

// sign makes the webhook-signature header: one v1 signature per secret in use (the current
// one, and the previous one during a rotation's overlap). A current secret that does not open
// (PAYMENTS_SECRETS_KEY changed) fails the attempt, which is logged and retried on the
// schedule; a previous one that does not open is left out.
func (d *Dispatcher) sign(e store.Endpoint, id string, at time.Time, body []byte) (string, error) {
	sealed := []string{e.SecretSealed}
	if e.PreviousSealed != nil && e.PreviousUntil != nil && at.Before(*e.PreviousUntil) {
		sealed = append(sealed, *e.PreviousSealed)
	}
	var sigs []string
	for i, s := range sealed {
		secret, err := d.Sealer.Open(s)
		if err != nil && i > 0 {
			d.Log.Warn("a webhook endpoint's previous secret does not open: signed with the current one only", "endpoint", e.ID)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("the endpoint's signing secret does not open with this PAYMENTS_SECRETS_KEY "+
				"(changed?): nothing was sent; `paymentsd webhooks rotate-secret` gives it a new one: %w", err)
		}
		wh, err := standardwebhooks.NewWebhook(string(secret))
		if err != nil {
			return "", err
		}
		sig, err := wh.Sign(id, at, body)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, sig)
	}
	return strings.Join(sigs, " "), nil
}

// post sends one attempt and reads the first 1 KB of the answer.
func (d *Dispatcher) post(ctx context.Context, url, id string, at time.Time, sig string, body []byte) (code int, head string,
	retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "paymentsd-webhooks/1")
	req.Header.Set(standardwebhooks.HeaderWebhookID, id)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
	req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	resp, err := d.httpClient().Do(req)
	if err != nil {
		return 0, "", 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	return resp.StatusCode, string(b), parseRetryAfter(resp.Header.Get("Retry-After"), d.Now()), nil
}

// text makes what a receiver answered storable: valid UTF-8, no NUL (PostgreSQL refuses both
// in TEXT), as a 1 KB cut may split a character.
func text(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// parseRetryAfter reads seconds or an HTTP date; anything else is no wish.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 0 {
		return time.Duration(min(s, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
