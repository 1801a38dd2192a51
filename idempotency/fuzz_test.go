package idempotency

// Fuzz target for the request hash. Run with scripts/fuzz.sh.

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// FuzzRequestHash: RequestHash is a deterministic SHA-256, and a JSON object hashes the same as
// its canonical form (json.Marshal of the decoded value: keys sorted, no white space), its
// indented form and its members in reverse order.
func FuzzRequestHash(f *testing.F) {
	f.Add("POST /v1/external/secretkey-auth/payments", []byte(`{"amount":1000,"currency":"USD","orderId":"order-1"}`))
	f.Fuzz(func(t *testing.T, operation string, body []byte) {
		h := RequestHash(operation, body)
		if len(h) != 32 {
			t.Fatalf("hash is %d bytes", len(h))
		}
		if again := RequestHash(operation, slices.Clone(body)); !bytes.Equal(h, again) {
			t.Fatalf("not deterministic for %q", body)
		}

		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		canon, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("re-marshal %q: %v", body, err)
		}
		if !bytes.Equal(RequestHash(operation, canon), h) {
			t.Fatalf("%q and its canonical form %q hash differently", body, canon)
		}
		indented, err := json.MarshalIndent(obj, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(RequestHash(operation, indented), h) {
			t.Fatalf("%q and its indented form hash differently", body)
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		var reversed bytes.Buffer
		reversed.WriteString("{ ")
		for i, k := range keys {
			kb, _ := json.Marshal(k)
			vb, err := json.Marshal(obj[k])
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 {
				reversed.WriteString(" ,\n")
			}
			reversed.Write(kb)
			reversed.WriteString(" : ")
			reversed.Write(vb)
		}
		reversed.WriteString(" }")
		if !bytes.Equal(RequestHash(operation, reversed.Bytes()), h) {
			t.Fatalf("%q and its members in reverse order %q hash differently", body, reversed.Bytes())
		}
	})
}
