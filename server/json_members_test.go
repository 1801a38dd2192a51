package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/idempotency"
)

func TestCheckDuplicateMembers(t *testing.T) {
	refused := []struct{ body, param string }{
		{`{"orderId":"a","orderId":"b"}`, "orderId"},
		{`{"orderId":"a","amount":1,"orderId":"a"}`, "orderId"}, // the same value twice too
		{`{"a":1,"\u0061":2}`, "a"},                             // one name, spelled two ways
		{`{"a\/b":1,"a/b":2}`, "a/b"},
		{`{"x":{"y":1,"y":2}}`, "x.y"},
		{`{"items":[{"n":1},{"n":2,"n":3}]}`, "items.1.n"},
		{`[{"a":1},[0,{"b":{},"b":[]}]]`, "1.1.b"},
		{`{"a":{"a":1},"a":2}`, "a"}, // the same name at two depths is fine; twice at the top is not
		{`{"":1,"":2}`, ""},
		{`{"a":[1,2,3],"b":{"c":null},"a":true}`, "a"},
		{`{"first":1,"first":2,"second":1,"second":2}`, "first"}, // the first duplicate is named
	}
	for _, tc := range refused {
		err := checkDuplicateMembers([]byte(tc.body))
		require.Error(t, err, tc.body)
		ae := classify(err)
		require.NotNil(t, ae)
		assert.Equal(t, http.StatusBadRequest, ae.Status, tc.body)
		assert.Equal(t, domain.CodeParameterInvalid, ae.Code, tc.body)
		assert.Equal(t, tc.param, ae.Param, tc.body)
		if tc.param != "" {
			assert.Equal(t, tc.param+": member sent more than once (duplicate JSON member name)", ae.Message, tc.body)
		}
	}
	accepted := []string{
		`{}`, `[]`, `null`, `1e400`, `"x"`,
		`{"orderId":"a","orderid":"b"}`, // names are compared exactly, as RFC 8259 does
		`{"a":{"a":{"a":1}}}`,
		`[{"a":1},{"a":2}]`, // the same name in sibling objects
		`{"a":1,"b":[{"a":2}],"c":{"a":3,"b":4}}`,
		`{"n":123456789012345678901234567890}`,
		// Not JSON: openapi3filter reports it, whatever duplicates come first.
		`{"a":1,"a":2`, `{"a":1,"a":2,}`, `{"a" 1}`, `{"a":1,"a":2}00`, `{"a":1,"a":2} {}`,
		strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000),
	}
	for _, body := range accepted {
		assert.NoError(t, checkDuplicateMembers([]byte(body)), "%.60s", body)
	}
}

func TestValidationRefusesDuplicateMembers(t *testing.T) {
	v := newTestValidator(t)
	const js = "application/json"
	cases := []struct{ path, body, param string }{
		{paymentsPath, `{"amount":1000,"currency":"USD","orderId":"o-1","orderId":"o-2"}`, "orderId"},
		{paymentsPath, `{"amount":1000,"amount":1,"currency":"USD","orderId":"o-1"}`, "amount"},
		{paymentsPath, `{"amount":1000,"currency":"USD","orderId":"o-1","customMetadata":"{}","customMetadata":"{}"}`, "customMetadata"},
		{withdrawalsPath, `{"amountInCents":500,"chainId":"eip155:8453","recipientAddress":"` + validAddr + `","recipientAddress":"` + validAddr + `"}`, "recipientAddress"},
	}
	for _, tc := range cases {
		ae, reached, _ := validate(t, v, http.MethodPost, tc.path, js, tc.body)
		assert.False(t, reached, tc.body)
		require.NotNil(t, ae, tc.body)
		assert.Equal(t, http.StatusBadRequest, ae.Status)
		assert.Equal(t, domain.CodeParameterInvalid, ae.Code)
		assert.Equal(t, tc.param, ae.Param, tc.body)
	}
	// Without duplicates, the same bodies pass, and what the handler reads hashes as before.
	body := `{"amount":1000,"currency":"USD","orderId":"o-1"}`
	ae, reached, seen := validate(t, v, http.MethodPost, paymentsPath, js, body)
	require.Nil(t, ae)
	assert.True(t, reached)
	assert.Equal(t, idempotency.RequestHash("POST "+paymentsPath, []byte(body)),
		idempotency.RequestHash("POST "+paymentsPath, []byte(seen)))
}

// Whatever the body, the check does not panic, and a body it refuses is one encoding/json reads.
func FuzzDuplicateMembers(f *testing.F) {
	for _, seed := range []string{`{"a":1,"a":2}`, `[{"x":{"y":[1,{"y":2,"y":3}]}}]`, `{"a":`, `{"":{"":1}}`, `"x"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if checkDuplicateMembers(body) != nil && !json.Valid(body) {
			t.Fatalf("%q refused as a duplicate but is not JSON", body)
		}
	})
}
