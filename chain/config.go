package chain

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// CAIP2 renders an EVM chain id in CAIP-2 form, "eip155:<id>".
func CAIP2(id int64) string { return "eip155:" + strconv.FormatInt(id, 10) }

// ParseCAIP2 reads "eip155:<id>" where id is a positive integer written canonically (decimal,
// no sign, no leading zeros, no spaces).
func ParseCAIP2(s string) (int64, error) {
	rest, ok := strings.CutPrefix(s, "eip155:")
	if !ok {
		return 0, fmt.Errorf("chain %q is not a CAIP-2 EVM id (eip155:<n>)", s)
	}
	if rest == "" || rest[0] == '0' || strings.TrimLeft(rest, "0123456789") != "" {
		return 0, fmt.Errorf("chain %q is not a CAIP-2 EVM id (eip155:<n>): n must be a positive integer without sign or leading zeros", s)
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("chain %q is not a CAIP-2 EVM id (eip155:<n>): n is out of range", s)
	}
	return id, nil
}

// ParseRPCURLs reads PAYMENTS_RPC_URLS: comma-separated CAIP2=URL entries, for example
// "eip155:8453=https://a,eip155:1=https://b,eip155:8453=https://c". Several URLs for one chain
// keep their order (the order they are tried in). URLs must be http, https, ws or wss and may
// not contain commas. An empty string gives an empty map. Errors name the entry by position,
// chain and redacted URL, never by the full URL (which may hold an API key).
func ParseRPCURLs(s string) (map[int64][]string, error) {
	out := map[int64][]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		pos := i + 1
		if entry == "" {
			return nil, fmt.Errorf("PAYMENTS_RPC_URLS entry %d is empty (stray comma?)", pos)
		}
		key, raw, ok := strings.Cut(entry, "=")
		key, raw = strings.TrimSpace(key), strings.TrimSpace(raw)
		if !ok || strings.Contains(key, "/") {
			return nil, fmt.Errorf("PAYMENTS_RPC_URLS entry %d (%s): want CAIP2=URL, e.g. eip155:1=https://host", pos, describe(entry))
		}
		id, err := ParseCAIP2(key)
		if err != nil {
			return nil, fmt.Errorf("PAYMENTS_RPC_URLS entry %d (%s=%s): %w", pos, key, RedactURL(raw), err)
		}
		if err := checkURL(raw); err != nil {
			return nil, fmt.Errorf("PAYMENTS_RPC_URLS entry %d (%s=%s): %w", pos, key, RedactURL(raw), err)
		}
		for _, prev := range out[id] {
			if prev == raw {
				return nil, fmt.Errorf("PAYMENTS_RPC_URLS entry %d (%s=%s): this URL is listed twice for the chain", pos, key, RedactURL(raw))
			}
		}
		out[id] = append(out[id], raw)
	}
	return out, nil
}

// describe shows an entry that has no '=' without leaking what might be a URL.
func describe(entry string) string {
	if strings.Contains(entry, "://") {
		return RedactURL(entry)
	}
	if len(entry) > 40 {
		return strconv.Quote(entry[:40] + "…")
	}
	return strconv.Quote(entry)
}

func checkURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("the URL is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("the URL does not parse")
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return fmt.Errorf("the URL scheme must be http, https, ws or wss (got %q)", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("the URL has no host")
	}
	return nil
}

// MaxConfirmations bounds PAYMENTS_CONFIRMATIONS values.
const MaxConfirmations = 10000

// ParseConfirmations reads PAYMENTS_CONFIRMATIONS: comma-separated CAIP2=N entries, for example
// "eip155:1=12,eip155:8453=10", N in 1..10000. A chain listed twice is an error. An empty string
// gives an empty map.
func ParseConfirmations(s string) (map[int64]int32, error) {
	out := map[int64]int32{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for i, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		pos := i + 1
		if entry == "" {
			return nil, fmt.Errorf("PAYMENTS_CONFIRMATIONS entry %d is empty (stray comma?)", pos)
		}
		key, val, ok := strings.Cut(entry, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok {
			return nil, fmt.Errorf("PAYMENTS_CONFIRMATIONS entry %d (%q): want CAIP2=N, e.g. eip155:1=12", pos, entry)
		}
		id, err := ParseCAIP2(key)
		if err != nil {
			return nil, fmt.Errorf("PAYMENTS_CONFIRMATIONS entry %d (%q): %w", pos, entry, err)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("PAYMENTS_CONFIRMATIONS entry %d (%q): %s is listed twice", pos, entry, key)
		}
		n, err := strconv.ParseInt(val, 10, 32)
		if err != nil || val == "" || val[0] == '+' || val[0] == '0' || n < 1 || n > MaxConfirmations {
			return nil, fmt.Errorf("PAYMENTS_CONFIRMATIONS entry %d (%q): confirmations must be an integer in 1..%d", pos, entry, MaxConfirmations)
		}
		out[id] = int32(n)
	}
	return out, nil
}

// RedactURL reduces a URL to scheme://host[:port]: RPC URLs often carry an API key in the path,
// the query or the user info, so only this form is ever logged or put in an error. Something
// that does not parse as a URL with a host gives "<invalid URL>".
func RedactURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "<invalid URL>"
	}
	return u.Scheme + "://" + u.Host
}
