package chain

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/ethereum/go-ethereum/rpc"
)

// The errors a Client's calls are classified into; test with errors.Is. Every error a Client
// returns is a *CallError naming the chain, the method and the (redacted) URL.
var (
	// ErrBlockNotFound: the node answered null for the block (beyond its head, or unknown hash).
	ErrBlockNotFound = errors.New("block not found")
	// ErrNotFound: the node does not know the transaction or receipt (null answer).
	ErrNotFound = errors.New("not found")
	// ErrRangeTooLarge: eth_getLogs refused the query's size (too many blocks or results);
	// query a smaller range. Never retried by the Client.
	ErrRangeTooLarge = errors.New("log query range too large")
	// ErrNonceTooLow: eth_sendRawTransaction refused the transaction's nonce as already used.
	ErrNonceTooLow = errors.New("nonce too low")
	// ErrUnderpriced: eth_sendRawTransaction refused the fee (underpriced, or an underpriced
	// replacement of a pending transaction with the same nonce).
	ErrUnderpriced = errors.New("transaction underpriced")
	// ErrChainIDMismatch: a URL answers eth_chainId with another chain than configured.
	ErrChainIDMismatch = errors.New("chain id mismatch")
	// ErrNoBaseFee: the latest block has no baseFeePerGas (a chain without EIP-1559).
	ErrNoBaseFee = errors.New("block has no base fee")
	// ErrUnavailable: every attempt failed with a transient error (timeouts, connection
	// errors, 5xx, rate limits): worth trying again later.
	ErrUnavailable = errors.New("RPC unavailable")
)

var sentinels = []error{ErrBlockNotFound, ErrNotFound, ErrRangeTooLarge, ErrNonceTooLow,
	ErrUnderpriced, ErrChainIDMismatch, ErrNoBaseFee, ErrUnavailable}

// CallError is the error of a Client call.
type CallError struct {
	ChainID int64
	Method  string // JSON-RPC method, e.g. eth_getLogs
	URL     string // redacted to scheme://host; empty when no URL was involved
	Err     error

	raw string // the full URL, only to scrub it from messages
}

func (e *CallError) Error() string {
	var b strings.Builder
	b.WriteString(CAIP2(e.ChainID))
	b.WriteByte(' ')
	b.WriteString(e.Method)
	if e.URL != "" {
		b.WriteString(" via ")
		b.WriteString(e.URL)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(scrub(e.Err.Error(), e.raw, e.URL))
	}
	return b.String()
}

func (e *CallError) Unwrap() error { return e.Err }

// scrub replaces a full URL (and its path+query) in a message by its redacted form.
func scrub(msg, raw, redacted string) string {
	if raw == "" || raw == redacted {
		return msg
	}
	msg = strings.ReplaceAll(msg, raw, redacted)
	if u, err := url.Parse(raw); err == nil {
		if rest := strings.TrimPrefix(u.RequestURI(), "/"); rest != "" && rest != "?" {
			msg = strings.ReplaceAll(msg, rest, "…")
		}
		if u.User != nil {
			msg = strings.ReplaceAll(msg, u.User.String(), "…")
		}
	}
	return msg
}

// kindError attaches one of the sentinels to the error that caused it.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string {
	if e.err == nil {
		return e.kind.Error()
	}
	if m := e.err.Error(); strings.Contains(strings.ToLower(m), strings.ToLower(e.kind.Error())) {
		return m
	}
	return e.kind.Error() + ": " + e.err.Error()
}

func (e *kindError) Unwrap() []error {
	if e.err == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.err}
}

func withKind(kind, err error) error { return &kindError{kind: kind, err: err} }

// badResponse is an answer this client cannot use (malformed JSON, wrong block): another URL
// may do better, the same one will not.
type badResponse struct{ msg string }

func (e *badResponse) Error() string { return "bad response: " + e.msg }

// class is what to do after a failed attempt.
type class int

const (
	// transient: retry with backoff; after Options.FailoverAfter failures, the next URL.
	transient class = iota
	// rateLimited: the next URL if there is one, else retry after a longer pause (or the
	// server's Retry-After).
	rateLimited
	// endpointBad: this URL cannot answer this (auth, malformed answers): the next URL, never
	// the same one again in this call.
	endpointBad
	// final: deterministic answer (not found, invalid params, reverted…): return it.
	final
)

func (c class) String() string {
	return [...]string{"transient", "rate-limited", "endpoint-bad", "final"}[c]
}

func hasSentinel(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func isRateLimitMsg(msg string) bool {
	msg = strings.ToLower(msg)
	return containsAny(msg, "rate limit", "rate-limit", "ratelimit", "rate limited", "too many requests",
		"throttl", "quota exceeded", "exceeded the quota", "exceeded its quota")
}

func isTransientMsg(msg string) bool {
	msg = strings.ToLower(msg)
	return containsAny(msg, "header not found", "timeout", "timed out", "try again", "temporarily",
		"unavailable", "overloaded", "busy", "internal error", "upstream")
}

// classify decides what a failed read does next.
func classify(err error) class {
	if hasSentinel(err) {
		return final
	}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		switch {
		case he.StatusCode == 429:
			return rateLimited
		case he.StatusCode >= 500 || he.StatusCode == 408:
			return transient
		default:
			if isRateLimitMsg(string(he.Body)) {
				return rateLimited
			}
			return endpointBad
		}
	}
	var re rpc.Error
	if errors.As(err, &re) {
		switch code := re.ErrorCode(); {
		case code == -32005 || code == 429 || isRateLimitMsg(re.Error()):
			return rateLimited
		case code == -32002 || code == -32603 || isTransientMsg(re.Error()):
			return transient
		}
		return final
	}
	var br *badResponse
	var se *json.SyntaxError
	var ute *json.UnmarshalTypeError
	switch {
	case errors.As(err, &br), errors.As(err, &se), errors.As(err, &ute), errors.Is(err, rpc.ErrNoResult):
		return endpointBad
	case errors.Is(err, context.Canceled):
		return final
	}
	// Timeouts, refused/reset connections, EOF, missing batch answers and anything else the
	// transport reports are worth another attempt.
	return transient
}

// isRangeTooLarge recognises eth_getLogs refusals that a smaller range cures. -32005 is both
// "limit exceeded" and "rate limited" depending on the provider: only a message about ranges,
// results or blocks makes it a range refusal.
func isRangeTooLarge(err error) bool {
	var msg string
	var re rpc.Error
	var he rpc.HTTPError
	switch {
	case errors.As(err, &re):
		msg = strings.ToLower(re.Error())
		if re.ErrorCode() == -32005 {
			return containsAny(msg, "range", "result", "block")
		}
		if re.ErrorCode() == -32003 { // geth: response too large
			return true
		}
	case errors.As(err, &he) && he.StatusCode >= 400 && he.StatusCode < 500 && he.StatusCode != 429:
		msg = strings.ToLower(string(he.Body))
	default:
		return false
	}
	if isRateLimitMsg(msg) {
		return false
	}
	return containsAny(msg, "query returned more than", "more than 10000 results", "range too large",
		"range is too large", "range too wide", "range is too wide", "block range", "exceed maximum block range",
		"exceeds maximum block range", "limit exceeded", "response size exceeded", "response too large",
		"too many blocks", "is limited to", "range limit", "range exceeds", "range should")
}

// classifySend decides what a failed eth_sendRawTransaction does next: only failures that
// certainly did not deliver the transaction are retried (on the same or the next URL);
// anything ambiguous (timeout, reset, EOF, 5xx) is returned, because the node may have taken
// it: the caller keeps the bytes and resends them itself.
func classifySend(err error) class {
	if hasSentinel(err) {
		return final
	}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		switch {
		case he.StatusCode == 429:
			return rateLimited
		case he.StatusCode >= 400 && he.StatusCode < 500 && he.StatusCode != 408:
			if isRateLimitMsg(string(he.Body)) {
				return rateLimited
			}
			return endpointBad
		}
		return final
	}
	var re rpc.Error
	if errors.As(err, &re) {
		if re.ErrorCode() == -32005 || re.ErrorCode() == 429 || isRateLimitMsg(re.Error()) {
			return rateLimited
		}
		return final
	}
	if notSent(err) {
		return transient
	}
	return final
}

// notSent reports a connection that was never made (the request cannot have arrived).
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

func isAlreadyKnown(msg string) bool {
	msg = strings.ToLower(msg)
	return containsAny(msg, "already known", "known transaction", "alreadyknown", "already imported",
		"already in mempool", "already exists")
}

func isNonceTooLow(msg string) bool {
	msg = strings.ToLower(msg)
	return containsAny(msg, "nonce too low", "oldnonce", "nonce is too low")
}

func isUnderpriced(msg string) bool {
	msg = strings.ToLower(msg)
	return containsAny(msg, "underpriced", "feetoolow", "fee too low")
}

// redactErr rewrites the URL inside a transport error (net/http puts the full URL in
// *url.Error) so that neither logs nor callers unwrapping the error see an API key.
func redactErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = RedactURL(ue.URL)
	}
	return err
}
