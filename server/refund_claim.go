package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"golang.org/x/time/rate"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/refunds"
)

// The refund-claim API behind the hosted claim page: authenticated by the refund's claim secret
// (X-Service-Refund-Secret, the claimUrl's fragment), never cached, and rate limited as the
// checkout's payment-secret API is (paymentSecretGuard): the secret is checked first, an opened
// refund spends its own budget, a failure its client's and its refund id's.

const (
	refundClaimPrefix = "/v1/external/refund-claim-auth/refunds/"
	refundClaimHeader = "X-Service-Refund-Secret"
)

type refundClaimKey struct{}

func claimedRefund(ctx context.Context) domain.Refund {
	r, _ := ctx.Value(refundClaimKey{}).(domain.Refund)
	return r
}

// refundClaimGuard authenticates and rate-limits the refund-claim API.
type refundClaimGuard struct {
	openRefund                     func(ctx context.Context, refundID, secret string) (domain.Refund, error)
	perRefund                      *limiters
	clientFailures, refundFailures *limiters
}

// newRefundClaimGuard sets the budgets of the payment-secret guard (newGuard): an opened refund 5
// requests/s (burst 20); failures 1/s per client address and one per 10 s per refund id (burst 20).
func newRefundClaimGuard(svc *refunds.Service) *refundClaimGuard {
	if svc == nil {
		return nil
	}
	return &refundClaimGuard{openRefund: svc.OpenClaim, perRefund: newLimiters(5, 20),
		clientFailures: newLimiters(1, 20), refundFailures: newLimiters(0.1, 20)}
}

// open authenticates a refund-claim request (the refund id from its path).
func (g *refundClaimGuard) open(c echo.Context) (domain.Refund, error) {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	rawID, _, _ := strings.Cut(strings.TrimPrefix(c.Request().URL.Path, refundClaimPrefix), "/")
	secret := strings.TrimSpace(c.Request().Header.Get(refundClaimHeader))
	if secret == "" {
		return domain.Refund{}, domain.ErrInvalidRefundSecret // no lookup: costs nothing, counts nothing
	}
	id, err := uuid.Parse(rawID)
	if err != nil || len(rawID) != 36 {
		return domain.Refund{}, domain.ErrRefundNotFound
	}
	limited := func(ok bool, wait time.Duration) error {
		if ok {
			return nil
		}
		h.Set("Retry-After", fmt.Sprint(retrySeconds(wait)))
		return &rateLimitedError{wait}
	}
	r, err := g.openRefund(c.Request().Context(), id.String(), secret)
	now := time.Now()
	if errors.Is(err, domain.ErrRefundNotFound) {
		failures := []*rate.Reservation{g.clientFailures.reserve(clientKey(c), now), g.refundFailures.reserve(id.String(), now)}
		if lerr := limited(takeAll(now, failures...)); lerr != nil {
			return domain.Refund{}, lerr
		}
		return domain.Refund{}, err
	}
	if err != nil {
		return domain.Refund{}, err
	}
	if err := limited(takeAll(now, g.perRefund.reserve(r.ID.String(), now))); err != nil {
		return domain.Refund{}, err
	}
	return r, nil
}

func (h *handlers) GetRefundClaim(ctx context.Context, _ gen.GetRefundClaimRequestObject) (gen.GetRefundClaimResponseObject, error) {
	v, err := h.refunds.View(ctx, claimedRefund(ctx))
	if err != nil {
		return nil, err
	}
	return gen.GetRefundClaim200JSONResponse(refundClaimView(v)), nil
}

func (h *handlers) ClaimRefund(ctx context.Context, req gen.ClaimRefundRequestObject) (gen.ClaimRefundResponseObject, error) {
	r, err := h.refunds.Claim(ctx, claimedRefund(ctx), req.Body.RecipientAddress, req.Body.Signature)
	if err != nil {
		return nil, err
	}
	v, err := h.refunds.View(ctx, r)
	if err != nil {
		return nil, err
	}
	return gen.ClaimRefund200JSONResponse(refundClaimView(v)), nil
}

// ClaimOverpaymentRefund makes (once) the refund of a checkout payment's excess and answers its
// claim link.
func (h *handlers) ClaimOverpaymentRefund(ctx context.Context, _ gen.ClaimOverpaymentRefundRequestObject) (gen.ClaimOverpaymentRefundResponseObject, error) {
	r, err := h.refunds.ClaimOverpayment(ctx, checkoutPayment(ctx))
	if err != nil {
		return nil, err
	}
	// The link even once claimed: the claim page shows the refund's state to whoever holds it.
	return gen.ClaimOverpaymentRefund200JSONResponse(gen.OverpaymentRefund{RefundId: r.ID, ClaimUrl: h.refunds.ClaimLink(r.ID),
		AmountAsset: r.AmountAsset.String(), TokenSymbol: r.Token.Symbol, TokenDecimals: r.Token.Decimals}), nil
}

// refundClaimView renders the claim page's view, with the EIP-712 typed data to sign (the
// recipient left as the zero address for the wallet's).
func refundClaimView(v refunds.ClaimView) gen.RefundClaim {
	r := v.Refund
	out := gen.RefundClaim{Id: r.ID, Status: gen.RefundStatus(r.Status), MerchantDisplayName: v.Merchant.Shown(), ChainId: chains.CAIP2(r.Chain.ID),
		ChainName: r.Chain.Name, TokenSymbol: r.Token.Symbol, TokenDecimals: r.Token.Decimals, AmountAsset: r.AmountAsset.String(),
		PayerAddresses: v.Payers, RecipientAddress: r.RecipientAddress, ClaimExpiresAt: r.ClaimExpiresAt}
	if r.Token.AssetType == domain.ERC20 {
		addr := r.Token.ContractAddress
		out.TokenAddress = &addr
	}
	td := refunds.TypedData(r.ID, r.Chain.ID, common.Address{})
	out.TypedData.PrimaryType = gen.RefundClaimTypedDataPrimaryType(td.PrimaryType)
	out.TypedData.Domain.Name = gen.RefundClaimTypedDataDomainName(td.Domain.Name)
	out.TypedData.Domain.Version = gen.RefundClaimTypedDataDomainVersion(td.Domain.Version)
	out.TypedData.Domain.ChainId = r.Chain.ID
	out.TypedData.Message.RefundId, out.TypedData.Message.ChainId = r.ID.String(), r.Chain.ID
	out.TypedData.Message.Recipient = common.Address{}.Hex()
	out.TypedData.Types = map[string][]struct {
		Name string `json:"name"`
		Type string `json:"type"`
	}{}
	for name, fields := range td.Types {
		for _, f := range fields {
			out.TypedData.Types[name] = append(out.TypedData.Types[name], struct {
				Name string `json:"name"`
				Type string `json:"type"`
			}{f.Name, f.Type})
		}
	}
	return out
}
