// Command webhook-receiver is an example merchant endpoint for paymentsd webhooks: it verifies
// the Standard Webhooks signature with the reference library, refuses stale timestamps,
// de-duplicates by webhook-id (retries and redeliveries carry the same id), and decodes the
// body with the generated Go client's types.
//
//	WEBHOOK_SECRET=whsec_… go run ./examples/webhook-receiver -addr :9000
//
// Production receivers keep the seen ids in their database, in the transaction that acts on the
// event, and answer 2xx only after that commits.
package main

import (
	"encoding/json"
	"flag"
	"io"
	"log"
	"net/http"
	"os"
	"sync"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/paymentsd/paymentsd/gen/client"
)

func main() {
	addr := flag.String("addr", ":9000", "listen address")
	flag.Parse()
	h, err := newHandler(os.Getenv("WEBHOOK_SECRET"), func(ev client.WebhookEvent, kind string) {
		log.Printf("event %s", kind)
	})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(*addr, h))
}

// newHandler verifies, de-duplicates and hands each new event to handle.
func newHandler(secret string, handle func(ev client.WebhookEvent, kind string)) (http.Handler, error) {
	wh, err := standardwebhooks.NewWebhook(secret) // the endpoint's whsec_… secret
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		// Checks webhook-signature against "id.timestamp.body" and that webhook-timestamp is
		// within 5 minutes (a replayed old request fails).
		if err := wh.Verify(body, r.Header); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev client.WebhookEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "not an event", http.StatusBadRequest)
			return
		}
		id := r.Header.Get("webhook-id")
		mu.Lock()
		dup := seen[id]
		seen[id] = true
		mu.Unlock()
		if dup {
			w.WriteHeader(http.StatusNoContent) // already handled: acknowledge, do nothing
			return
		}
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &head)
		handle(ev, head.Type)
		w.WriteHeader(http.StatusNoContent)
	}), nil
}
