package dashauth

import (
	"context"
	"time"
)

// SetOIDCIntervals shortens an OIDC verifier's periodic JWKS refresh, its re-read interval for
// unknown kids and its discovery retry interval; call it before the first discovery.
func SetOIDCIntervals(o *OIDC, refresh, unknownKID, retry time.Duration) {
	o.refreshInterval, o.unknownKIDInterval, o.retryInterval = refresh, unknownKID, retry
}

// KeyReads is how many times the issuer has read its published keys from the database.
func KeyReads(i *Issuer) int64 { return i.reads.Load() }

// SignClaims signs a token of the issuer with claims as set edits them (forgeries the issuer's
// own minting never makes).
func SignClaims(i *Issuer, set func(*Claims)) (string, error) {
	s, _, err := i.sign(context.Background(), time.Minute, set)
	return s, err
}
