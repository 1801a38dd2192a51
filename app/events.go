package app

import (
	"context"
	"errors"

	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/store"
)

// eventObjects renders an event's object as GET would answer at that moment: read-time truths
// (a quote past its expiry reads as expired) applied as the payments service applies them.
type eventObjects struct{ settlement.Objects }

func (o eventObjects) Payment(p domain.Payment) ([]byte, error) {
	return o.Objects.Payment(payments.Present(p, Now()))
}

// shapeSetting records the response shape `serve` renders, for operator commands' events.
const shapeSetting = "response_shape"

// RecordShape records the shape this serve process renders.
func (a *App) RecordShape(ctx context.Context) error {
	return a.Store.InTx(ctx, func(tx *store.Tx) error { return tx.PutSetting(shapeSetting, string(a.Cfg.ResponseShape)) })
}

// FollowRecordedShape makes this process render events in the shape `serve` recorded (an
// operator command's settle or cancel announces objects as GET serves them).
func (a *App) FollowRecordedShape(ctx context.Context) error {
	v, err := a.Store.Read(ctx).Setting(shapeSetting)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	shape, err := settlement.ParseShape(v)
	if err != nil {
		return err
	}
	a.Cfg.ResponseShape = shape
	a.Core.Render = a.eventObjects(shape)
	return nil
}
