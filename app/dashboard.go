package app

import "context"

// jwks publishes the dashboard issuer's keys (none before the first token is minted).
func (a *App) jwks(ctx context.Context) (any, error) { return a.Tokens.JWKS(ctx) }
