package server

import (
	"github.com/paymentsd/paymentsd/checkout"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/merchants"
	"github.com/paymentsd/paymentsd/metrics"
	"github.com/paymentsd/paymentsd/payments"
	"github.com/paymentsd/paymentsd/people"
	"github.com/paymentsd/paymentsd/policy"
	"github.com/paymentsd/paymentsd/refunds"
	"github.com/paymentsd/paymentsd/settlement"
	"github.com/paymentsd/paymentsd/store"
	"github.com/paymentsd/paymentsd/webhooks"
	"github.com/paymentsd/paymentsd/withdrawals"
)

// handlers implements gen.StrictServerInterface: generated request in, domain call, typed
// response out. Documented errors travel as domain errors to the one renderer (errors.go).
type handlers struct {
	catalog       domain.Catalog
	payments      *payments.Service
	withdrawals   *withdrawals.Service
	refunds       *refunds.Service
	render        settlement.Renderer // the active response shape
	metrics       *metrics.Metrics    // nil: none
	paymentCache  *paymentCache       // encoded GET payment answers (payment_cache.go)
	checkout      *checkout.Service
	merchants     *merchants.Service
	webhooks      *webhooks.Service
	chainHealth   func() map[int64]ChainHealth // nil: the catalogue alone says isEnabled
	people        *people.Service
	publicBaseURL string                              // invitation links start with it
	store         *store.Store                        // the audit log's reads
	estimator     func(chainID int64) PayoutEstimator // nil: no payout estimates in this process
	policy        *policy.Service                     // payout settings, address book, approvals
}

var _ gen.StrictServerInterface = (*handlers)(nil)

const defaultLimit = 100

func pageParams(limit, offset *int32) (int32, int32) {
	l, o := int32(defaultLimit), int32(0)
	if limit != nil {
		l = *limit
	}
	if offset != nil {
		o = *offset
	}
	return l, o
}

func strOrEmpty[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}
