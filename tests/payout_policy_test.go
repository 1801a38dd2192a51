package tests

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/config"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/internal/testdb"
)

// The payout policy from outside (issue 23): the settings, the address book with its
// cooling-off, the rolling daily limit and the sanctions list, on both databases, every answer
// checked against openapi.yaml.

// sanctioned is on the sanctions list of newSanctionedEnv (written in mixed case there).
const sanctioned = "0x7f367cc41522ce07553e823bf3be79a889debe1b"

// policyMerchant is a funded live merchant with an admin person acting for it in the dashboard.
type policyMerchant struct {
	id    uuid.UUID
	key   string   // its secret key
	admin []string // a person admin's bearer header (ann@shop.example)
	base  string   // /v1/merchants/{id}
}

func (e *env) policyMerchant(cents int64) policyMerchant {
	e.t.Helper()
	m := e.merchant(merchantOpts{deposits: true, withdrawals: true})
	if cents > 0 {
		e.fund(m.SecretKey, cents)
	}
	ann := e.member(m.Merchant.ID, "ann@shop.example", domain.RoleAdmin)
	return policyMerchant{id: m.Merchant.ID, key: m.SecretKey, admin: bearerHeader(e.personToken(ann, "ann@shop.example")),
		base: "/v1/merchants/" + m.Merchant.ID.String()}
}

// settings changes the payout settings and requires it done.
func (e *env) settings(p policyMerchant, body map[string]any) map[string]any {
	e.t.Helper()
	r := e.do(http.MethodPatch, p.base+"/payout-settings", "", body, p.admin...)
	require.Equal(e.t, http.StatusOK, r.Status, string(r.Body))
	return r.JSON(e.t)
}

// waitOutLoosening moves the payout policy's clock past the cooling-off period a loosening
// change waits out (24 h, the default), plus margin — the request's other clocks stay.
func (e *env) waitOutLoosening(margin time.Duration) {
	e.app.Policy.Now = func() time.Time { return time.Now().UTC().Add(24*time.Hour + margin) }
}

// refused requires a 409 with code and param.
func refused(t *testing.T, r response, code, param string) {
	t.Helper()
	require.Equal(t, http.StatusConflict, r.Status, string(r.Body))
	got, typ, gotParam := r.errorFields(t)
	assert.Equal(t, code, got)
	assert.Equal(t, "invalid_request_error", typ)
	assert.Equal(t, param, gotParam)
}

// auditActions lists the merchant's audit entries of action, newest first.
func (e *env) auditActions(p policyMerchant, action string) []map[string]any {
	e.t.Helper()
	r := e.do(http.MethodGet, p.base+"/audit-log?action="+action, "", nil, bearerHeader(e.roleToken(p.id, domain.RoleOwner))...)
	require.Equal(e.t, http.StatusOK, r.Status, string(r.Body))
	var out []map[string]any
	for _, it := range r.JSON(e.t)["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func TestPayoutSettings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := e.policyMerchant(0)
		defaults := map[string]any{"approvalThresholdCents": nil, "allowlistOnly": false, "addressCoolingOffHours": 24.0,
			"dailyLimitCents": nil, "refundClaimDays": 30.0, "offerOverpaymentRefunds": false, "stricterPolicy": nil,
			"stricterPolicyUntil": nil, "updatedAt": nil}
		viewer := bearerHeader(e.roleToken(p.id, domain.RoleViewer))
		r := e.do(http.MethodGet, p.base+"/payout-settings", "", nil, viewer...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, defaults, r.JSON(t))

		bad := []any{map[string]any{}, map[string]any{"approvalThresholdCents": -1}, map[string]any{"dailyLimitCents": 0},
			map[string]any{"addressCoolingOffHours": 721}, map[string]any{"addressCoolingOffHours": -1}, map[string]any{"refundClaimDays": 0},
			map[string]any{"refundClaimDays": 366}, map[string]any{"allowlistOnly": "yes"}, map[string]any{"dailyLimitCents": 1.5},
			map[string]any{"dailyLimitCents": "100"}, map[string]any{"approvalThresholdCents": 100_000_000_001},
			map[string]any{"dailyLimit": 100}, map[string]any{"allowlistOnly": true, "dailyLimitCents": 0}, "[]", "null", `{"dailyLimitCents":`}
		for _, b := range bad {
			r := e.do(http.MethodPatch, p.base+"/payout-settings", "", b, p.admin...)
			require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", b, r.Body)
		}
		r = e.do(http.MethodPatch, p.base+"/payout-settings", "", map[string]any{"allowlistOnly": true}, viewer...)
		require.Equal(t, http.StatusForbidden, r.Status, "settings:write is the admin's: %s", r.Body)
		r = e.do(http.MethodGet, p.base+"/payout-settings", "", nil, viewer...)
		assert.Equal(t, defaults, r.JSON(t), "no refused request changed anything")
		assert.Empty(t, e.auditActions(p, "settings.payout_settings_updated"))

		got := e.settings(p, map[string]any{"approvalThresholdCents": 10_000, "dailyLimitCents": 50_000, "allowlistOnly": true,
			"addressCoolingOffHours": 0, "refundClaimDays": 7, "offerOverpaymentRefunds": true})
		assert.EqualValues(t, 10_000, got["approvalThresholdCents"])
		assert.EqualValues(t, 50_000, got["dailyLimitCents"])
		assert.EqualValues(t, 0, got["addressCoolingOffHours"], "0 h is allowed")
		assert.NotNil(t, got["updatedAt"])
		// 24 h → 0 loosens: the 24 h in force still applies until it is waited out.
		assert.Equal(t, map[string]any{"approvalThresholdCents": nil, "allowlistOnly": false, "addressCoolingOffHours": 24.0,
			"dailyLimitCents": nil}, got["stricterPolicy"], "the rules before the change")
		until, err := time.Parse(time.RFC3339Nano, got["stricterPolicyUntil"].(string))
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now().Add(24*time.Hour), until, time.Minute)
		got = e.settings(p, map[string]any{"dailyLimitCents": nil})
		assert.Nil(t, got["dailyLimitCents"], "null turns the limit off")
		assert.EqualValues(t, 10_000, got["approvalThresholdCents"], "absent fields keep their value")
		assert.Equal(t, true, got["allowlistOnly"])
		assert.EqualValues(t, 50_000, got["stricterPolicy"].(map[string]any)["dailyLimitCents"], "turning the limit off waits too")

		entries := e.auditActions(p, "settings.payout_settings_updated")
		require.Len(t, entries, 2)
		d := entries[0]["details"].(map[string]any)
		assert.EqualValues(t, 50_000, d["before"].(map[string]any)["dailyLimitCents"])
		assert.Nil(t, d["after"].(map[string]any)["dailyLimitCents"])
		assert.Equal(t, "ann@shop.example", entries[0]["actor"].(map[string]any)["label"])
	})
}

// Each mode has its own payout settings: a test-mode admin's change binds test money only, and a
// live withdrawal follows live's rules (review D4: one shared set let test access change live's).
func TestPayoutSettingsPerMode(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := e.policyMerchant(100_000)
		testAdmin := bearerHeader(e.testPersonToken(e.member(p.id, "tess@shop.example", domain.RoleAdmin), "tess@shop.example"))
		r := e.do(http.MethodPatch, p.base+"/payout-settings", "", map[string]any{"allowlistOnly": true, "approvalThresholdCents": 1}, testAdmin...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		assert.Equal(t, true, r.JSON(t)["allowlistOnly"])

		live := e.do(http.MethodGet, p.base+"/payout-settings", "", nil, p.admin...).JSON(t)
		assert.Equal(t, false, live["allowlistOnly"], "live's rules did not move")
		assert.Nil(t, live["approvalThresholdCents"])
		assert.Nil(t, live["updatedAt"], "live's never changed")
		test := e.do(http.MethodGet, p.base+"/payout-settings", "", nil, testAdmin...).JSON(t)
		assert.Equal(t, true, test["allowlistOnly"])

		// A live withdrawal to an address in no book, of more than test's threshold: paid as
		// live's rules say (no allowlist, no approval).
		r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(5_000))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		assert.Equal(t, false, approval(t, r)["required"])

		entries := e.auditActions(p, "settings.payout_settings_updated")
		require.Len(t, entries, 1)
		assert.Equal(t, "test", entries[0]["details"].(map[string]any)["mode"], "the audit entry names the mode")
	})
}

func TestAddressBookAllowlistAndCoolingOff(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := e.policyMerchant(100_000)
		e.settings(p, map[string]any{"allowlistOnly": true})
		r := e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000))
		refused(t, r, "recipient_not_in_address_book", "recipientAddress")

		book := p.base + "/address-book"
		r = e.do(http.MethodPost, book, "", map[string]any{"label": "Treasury", "chainId": "eip155:8453", "address": "0x5AEDA56215b167893e80B4fE645BA6d5Bab767DE"}, p.admin...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		saved := r.JSON(t)
		assert.Equal(t, recipient, saved["address"], "saved lowercase")
		assert.Equal(t, "ann@shop.example", saved["createdBy"])
		created, _ := time.Parse(time.RFC3339Nano, saved["createdAt"].(string))
		usable, _ := time.Parse(time.RFC3339Nano, saved["usableAt"].(string))
		assert.Equal(t, 24*time.Hour, usable.Sub(created), "usable after the cooling-off period")
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000)), "recipient_cooling_off", "recipientAddress")
		refused(t, e.do(http.MethodPost, p.base+"/withdrawals", "", withdrawal(1_000), p.admin...), "recipient_cooling_off", "recipientAddress")

		refused(t, e.do(http.MethodPost, book, "", map[string]any{"label": "Again", "chainId": "eip155:8453", "address": recipient}, p.admin...),
			"address_exists", "address")
		// The test xpub's first deposit address (the funding deposit's): money sent there comes back.
		r = e.do(http.MethodPost, book, "", map[string]any{"label": "Ours", "chainId": "eip155:8453", "address": "0x9858effd232b4033e47d90003d41ec34ecaeda94"}, p.admin...)
		require.Equal(t, http.StatusBadRequest, r.Status, string(r.Body))
		code, _, param := r.errorFields(t)
		assert.Equal(t, "recipient_not_allowed", code)
		assert.Equal(t, "address", param)
		for _, b := range []map[string]any{
			{"label": "", "chainId": "eip155:8453", "address": recipient}, {"label": "x", "chainId": "eip155:999999", "address": recipient},
			{"label": "x", "chainId": "base", "address": recipient}, {"label": "x", "chainId": "eip155:8453", "address": "0x0000000000000000000000000000000000000000"},
			{"label": "x", "chainId": "eip155:8453", "address": "0x123"}, {"label": "a\u202eb", "chainId": "eip155:8453", "address": recipient},
			{"chainId": "eip155:8453", "address": recipient},
		} {
			r := e.do(http.MethodPost, book, "", b, p.admin...)
			require.Equal(t, http.StatusBadRequest, r.Status, "%v: %s", b, r.Body)
		}

		// 0 h: a new address is usable at once, once the 24 h in force when the period was
		// shortened are waited out (policy/loosening_test.go holds the wait itself).
		e.settings(p, map[string]any{"addressCoolingOffHours": 0})
		e.waitOutLoosening(time.Minute)
		other := "0x2222222222222222222222222222222222222222"
		r = e.do(http.MethodPost, book, "", map[string]any{"label": "Supplier", "chainId": "eip155:8453", "address": other}, bearerHeader(e.roleToken(p.id, domain.RoleAdmin))...)
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		second := r.JSON(t)
		assert.Equal(t, second["createdAt"], second["usableAt"])
		assert.Nil(t, second["createdBy"], "a service token is not a person")
		r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000, "recipientAddress", other))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000))
		require.Equal(t, http.StatusCreated, r.Status, "the first one's 24 h are over on the policy's clock: %s", r.Body)
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000, "recipientAddress", other, "chainId", "eip155:1")),
			"recipient_not_in_address_book", "recipientAddress")

		r = e.do(http.MethodGet, book, "", nil, bearerHeader(e.roleToken(p.id, domain.RoleViewer))...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		data := r.JSON(t)["data"].([]any)
		require.Len(t, data, 2)
		assert.Equal(t, other, data[0].(map[string]any)["address"], "newest first")

		r = e.do(http.MethodDelete, book+"/"+second["id"].(string), "", nil, bearerHeader(e.roleToken(p.id, domain.RoleViewer))...)
		assert.Equal(t, http.StatusForbidden, r.Status)
		r = e.do(http.MethodDelete, book+"/"+second["id"].(string), "", nil, p.admin...)
		require.Equal(t, http.StatusNoContent, r.Status, string(r.Body))
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000, "recipientAddress", other)), "recipient_not_in_address_book", "recipientAddress")
		for _, id := range []string{second["id"].(string), uuid.NewString(), "nope"} {
			r = e.do(http.MethodDelete, book+"/"+id, "", nil, p.admin...)
			require.Equal(t, http.StatusNotFound, r.Status, string(r.Body))
		}
		assert.Len(t, e.auditActions(p, "address_book.entry_added"), 2)
		assert.Len(t, e.auditActions(p, "address_book.entry_removed"), 1)
	})
}

func TestDailyLimitAtItsBoundary(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		p := e.policyMerchant(100_000)
		e.settings(p, map[string]any{"dailyLimitCents": 10_000})
		r := e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(6_000))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		first := r.JSON(t)["id"].(string)
		balance := e.balance(p.id)
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(4_001)), "daily_limit_exceeded", "amountInCents")
		refused(t, e.do(http.MethodPost, p.base+"/withdrawals", "", withdrawal(4_001), p.admin...), "daily_limit_exceeded", "amountInCents")
		assert.Equal(t, balance, e.balance(p.id), "a refusal debits nothing")
		r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(4_000))
		require.Equal(t, http.StatusCreated, r.Status, "exactly the limit is allowed: %s", r.Body)
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(100)), "daily_limit_exceeded", "amountInCents")

		// A cancelled withdrawal is money that did not leave: it no longer counts.
		r = e.do(http.MethodPost, p.base+"/withdrawals/"+first+"/cancel", "", nil, p.admin...)
		require.Equal(t, http.StatusOK, r.Status, string(r.Body))
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(6_001)), "daily_limit_exceeded", "amountInCents")
		r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(6_000))
		require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
		refused(t, e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(100)), "daily_limit_exceeded", "amountInCents")
	})
}

// newSanctionedEnv is an env whose sanctions list holds the address sanctioned.
func newSanctionedEnv(t *testing.T, backend string) *env {
	file := filepath.Join(t.TempDir(), "sanctions.txt")
	require.NoError(t, os.WriteFile(file, []byte("# OFAC SDN, for the test\n0x7F367CC41522ce07553e823bf3be79a889debe1b\n"), 0o600))
	return newEnvWith(t, backend, func(c *config.Config) { c.Chains.SanctionsFile = file })
}

func TestSanctionedRecipientRefusedAndAudited(t *testing.T) {
	for _, b := range testdb.Backends() {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newSanctionedEnv(t, b)
			p := e.policyMerchant(100_000)
			balance := e.balance(p.id)
			r := e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000, "recipientAddress", "0x7F367CC41522CE07553E823BF3BE79A889DEBE1B"))
			refused(t, r, "recipient_sanctioned", "recipientAddress")
			refused(t, e.do(http.MethodPost, p.base+"/withdrawals", "", withdrawal(2_000, "recipientAddress", sanctioned), p.admin...),
				"recipient_sanctioned", "recipientAddress")
			refused(t, e.do(http.MethodPost, p.base+"/address-book", "", map[string]any{"label": "x", "chainId": "eip155:8453", "address": sanctioned}, p.admin...),
				"recipient_sanctioned", "address")
			assert.Equal(t, balance, e.balance(p.id), "nothing debited")
			r = e.do(http.MethodGet, withdrawalsPath, p.key, nil)
			assert.Empty(t, r.JSON(t)["data"], "nothing created")

			entries := e.auditActions(p, "payout.recipient_sanctioned")
			require.Len(t, entries, 3, "every attempt is in the audit log though its transaction rolled back")
			byKey := entries[2]
			assert.Equal(t, "withdrawal", byKey["targetType"])
			assert.Equal(t, sanctioned, byKey["targetId"])
			assert.Equal(t, "service", byKey["actor"].(map[string]any)["kind"], "the secret key tried")
			assert.EqualValues(t, 1_000, byKey["details"].(map[string]any)["amountInCents"])
			assert.Equal(t, "ann@shop.example", entries[1]["actor"].(map[string]any)["label"])
			assert.Equal(t, "address_book_entry", entries[0]["targetType"])

			r = e.do(http.MethodPost, withdrawalsPath, p.key, withdrawal(1_000))
			require.Equal(t, http.StatusCreated, r.Status, "another recipient is paid: %s", r.Body)
		})
	}
}

// The secret-key estimate is the dashboard's (its answers with a payout manager are in the
// devnet test): checked as a created withdrawal, 503 where no payout manager runs the chain.
func TestEstimateWithdrawalBySecretKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		m := e.merchant(merchantOpts{withdrawals: true})
		off := e.merchant(merchantOpts{name: "Off"})
		path := withdrawalsPath + "/estimate?"
		r := e.do(http.MethodGet, path+"amountInCents=1000&chainId=eip155:8453", m.SecretKey, nil)
		require.Equal(t, http.StatusServiceUnavailable, r.Status, string(r.Body))
		code, _, _ := r.errorFields(t)
		assert.Equal(t, "no_chain_available", code)
		for _, q := range []string{"amountInCents=1&chainId=eip155:8453", "amountInCents=999999999&chainId=eip155:8453",
			"amountInCents=1000&chainId=eip155:999999", "amountInCents=1000&chainId=base", "amountInCents=abc&chainId=eip155:8453",
			"chainId=eip155:8453", "amountInCents=1000", "amountInCents=1000&chainId=eip155:84532"} {
			r := e.do(http.MethodGet, path+q, m.SecretKey, nil)
			assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", q, r.Body)
		}
		r = e.do(http.MethodGet, path+"amountInCents=1000&chainId=eip155:8453", off.SecretKey, nil)
		require.Equal(t, http.StatusForbidden, r.Status, string(r.Body))
		code, _, _ = r.errorFields(t)
		assert.Equal(t, "withdrawals_disabled", code)
		assert.Equal(t, http.StatusUnauthorized, e.do(http.MethodGet, path+"amountInCents=1000&chainId=eip155:8453", "sk_live_nope", nil).Status)
	})
}
