package checkout_test

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paymentsd/paymentsd/checkout"
)

// The languages the pages speak (issue 24): English and at least these.
var wantLanguages = []string{"en", "es", "fr", "de", "pt", "zh"}

func catalogue(t *testing.T) map[string]map[string]string {
	t.Helper()
	var cat map[string]map[string]string
	dec := json.NewDecoder(bytes.NewReader(checkout.Catalogue))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&cat), "checkout/page/i18n.json: an object of languages, each an object of strings")
	return cat
}

var placeholder = regexp.MustCompile(`\{[A-Za-z]+\}`)

func placeholders(s string) []string {
	p := placeholder.FindAllString(s, -1)
	sort.Strings(p)
	return p
}

// Every language has every key of English and no other, none empty, each with the same
// {placeholders} as English (a translation that drops {amount} would hide the amount).
func TestCatalogueLanguagesMatchEnglish(t *testing.T) {
	cat := catalogue(t)
	for _, lang := range wantLanguages {
		require.Contains(t, cat, lang)
	}
	en := cat["en"]
	require.NotEmpty(t, en)
	for lang, msgs := range cat {
		for key, s := range en {
			got, ok := msgs[key]
			if !assert.Truef(t, ok, "%s lacks %q", lang, key) {
				continue
			}
			assert.NotEmptyf(t, strings.TrimSpace(got), "%s %q is empty", lang, key)
			assert.Equalf(t, placeholders(s), placeholders(got), "%s %q: placeholders", lang, key)
		}
		for key := range msgs {
			assert.Containsf(t, en, key, "%s has %q, which English has not", lang, key)
		}
		if lang == "en" {
			continue
		}
		// Translated, not copied: a few messages may read the same ("Token", "{amount} {symbol}").
		same := 0
		for key, s := range msgs {
			if s == en[key] {
				same++
			}
		}
		assert.Lessf(t, same, len(en)/20, "%s: %d messages are English's", lang, same)
		assert.NotEqual(t, en["language.name"], msgs["language.name"])
	}
}

// The pages use exactly the catalogue's keys: every key the HTML (data-i18n, data-i18n-alt,
// data-i18n-aria-label) and the scripts (t("…")) name is in English, and every English key is
// named somewhere (no message left behind when a string goes away).
func TestCatalogueKeysAreUsed(t *testing.T) {
	en := catalogue(t)["en"]
	sources := []string{"page/index.html", "page/refund.html", "page/assets/checkout.js", "page/assets/refund.js",
		"page/assets/i18n.js", "page/assets/wallets.js", "wallet/src/wallet.js", "wallet/src/gasless.js"}
	used := map[string]bool{}
	attr := regexp.MustCompile(`data-i18n(?:-alt|-aria-label)?="([^"]+)"`)
	call := regexp.MustCompile(`\bt\("([^"]+)"`)
	quoted := regexp.MustCompile(`"((?:common|checkout|status|wallet|refund|language)\.[A-Za-z.]+)"`)
	for _, f := range sources {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, re := range []*regexp.Regexp{attr, call, quoted} {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				used[m[1]] = true
				assert.Containsf(t, en, m[1], "%s names %q, which the catalogue has not", f, m[1])
			}
		}
		if strings.HasSuffix(f, ".js") {
			assert.NotRegexpf(t, "t\\(`", string(b), "%s: a key built at run time (t(`…`)) cannot be checked", f)
		}
	}
	for key := range en {
		assert.Truef(t, used[key], "the catalogue's %q is used nowhere", key)
	}
}

// i18n.js as served is the catalogue, compacted, as a constant in front of the script; both
// pages load it first (deferred scripts run in order), from this origin.
func TestI18nScript(t *testing.T) {
	js, typ, err := checkout.Asset("i18n.js")
	require.NoError(t, err)
	assert.Equal(t, "text/javascript; charset=utf-8", typ)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, checkout.Catalogue))
	head, script, ok := strings.Cut(string(js), ";\n")
	require.True(t, ok)
	assert.True(t, strings.HasSuffix(head, "const checkoutCatalogue = "+compact.String()))
	raw, err := os.ReadFile("page/assets/i18n.js")
	require.NoError(t, err)
	assert.Equal(t, string(raw), script)
	for _, want := range []string{"navigator.languages", "URLSearchParams(location.search).get(\"lang\")", "documentElement.lang"} {
		assert.Contains(t, script, want)
	}

	_, err = checkout.I18nScript([]byte(`{"es": {"a": "b"}}`))
	assert.Error(t, err, "no English")
	_, err = checkout.I18nScript([]byte(`{"en": {"a": 1}}`))
	assert.Error(t, err, "not strings")

	page, err := checkout.PageHTML("01a20b10-0000-7000-8000-000000000001", false)
	require.NoError(t, err)
	assert.Contains(t, string(page), `<script src="/pay/assets/i18n.js" defer></script>
<script src="/pay/assets/amounts.js" defer></script>
<script src="/pay/assets/checkout.js" defer></script>
<script src="/pay/assets/wallets.js" defer></script>
<script src="/pay/assets/wallet.js" defer></script>`)
	refund, err := checkout.RefundPageHTML("01a20b10-0000-7000-8000-000000000001")
	require.NoError(t, err)
	assert.Contains(t, string(refund), `<script src="/pay/assets/i18n.js" defer></script>
<script src="/pay/assets/amounts.js" defer></script>`)
}
