package worker

import "context"

// partial marks a round's error as its items' own (Partial).
type partial struct{ error }

func (p partial) Unwrap() error { return p.error }

// Partial marks err (nil stays nil) as the failure of some items of a round that otherwise did
// its work: it is logged and counted, and the loop keeps its pace instead of backing off.
func Partial(err error) error {
	if err == nil {
		return nil
	}
	return partial{err}
}

type stopKey struct{}

// withStop carries the runtime's stop signal to the rounds, whose own context outlives it.
func withStop(ctx context.Context, stop <-chan struct{}) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// Stopping reports whether the runtime running this round is shutting down: a round that loops
// over many items (webhook deliveries) stops taking new ones, and finishes the one in hand.
// Outside a runtime it follows ctx alone.
func Stopping(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	stop, _ := ctx.Value(stopKey{}).(<-chan struct{})
	select {
	case <-stop:
		return true
	default:
		return false
	}
}
