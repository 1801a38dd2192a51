// Package risk screens the sender of a payment's transaction. The result is shown to the
// merchant on the receipt (txRiskScore, txRiskSeverity, txRiskProvider); it never stops a
// payment from completing — the funds have arrived, and the merchant decides what to do.
package risk

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Severity is the receipt's txRiskSeverity.
type Severity string

// Severities, most severe first.
const (
	Critical Severity = "CRITICAL_RISK"
	High     Severity = "HIGH_RISK"
	Medium   Severity = "MEDIUM_RISK"
	Low      Severity = "LOW_RISK"
	None     Severity = "NO_RISK"
)

// Result is a screening's outcome: Score 1–100, higher is safer; Provider names who screened.
type Result struct {
	Score    int32
	Severity Severity
	Provider string
}

// Provider screens an address on a chain.
type Provider interface {
	Screen(ctx context.Context, chainID int64, address string) (Result, error)
}

// SanctionsList flags addresses on a list: a listed sender is CRITICAL_RISK with score 1,
// anyone else NO_RISK with score 100.
type SanctionsList struct {
	listed map[string]bool
}

// ProviderName is what the receipt's txRiskProvider says for the built-in list.
const ProviderName = "sanctions-list"

var addressRE = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// LoadSanctionsFile reads one address per line; blank lines and lines starting with # are
// skipped. A malformed line is an error naming it: a list that silently skips entries would
// let a sanctioned sender through.
func LoadSanctionsFile(path string) (*SanctionsList, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sanctions list: %w", err)
	}
	defer f.Close()
	l := &SanctionsList{listed: map[string]bool{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !addressRE.MatchString(line) {
			return nil, fmt.Errorf("sanctions list %s line %d: %q is not an address (0x + 40 hex digits)", path, n, line)
		}
		l.listed[strings.ToLower(line)] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sanctions list %s: %w", path, err)
	}
	return l, nil
}

// Len is how many addresses are listed.
func (l *SanctionsList) Len() int { return len(l.listed) }

// Contains reports whether address (any letter case) is listed; a nil list lists nobody. The
// payout policy refuses to pay a listed address (package policy).
func (l *SanctionsList) Contains(address string) bool {
	return l != nil && l.listed[strings.ToLower(address)]
}

// Screen implements Provider.
func (l *SanctionsList) Screen(_ context.Context, _ int64, address string) (Result, error) {
	if l != nil && l.listed[strings.ToLower(address)] {
		return Result{Score: 1, Severity: Critical, Provider: ProviderName}, nil
	}
	return Result{Score: 100, Severity: None, Provider: ProviderName}, nil
}
