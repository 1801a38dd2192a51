package server

import (
	"context"
	"fmt"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/payouts"
)

// PayoutEstimator estimates a payout on one chain (payouts.Manager).
type PayoutEstimator interface {
	Estimate(ctx context.Context, tok domain.Token, cents int64) (payouts.Estimate, error)
}

// EstimateMerchantWithdrawal checks the amount and chain as a created withdrawal's are, then asks
// the chain's payout manager what it would send: the same conversion code as the payout.
func (h *handlers) EstimateMerchantWithdrawal(ctx context.Context, req gen.EstimateMerchantWithdrawalRequestObject) (gen.EstimateMerchantWithdrawalResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	out, err := h.estimateWithdrawal(ctx, m, req.Params.AmountInCents, req.Params.ChainId)
	if err != nil {
		return nil, err
	}
	return gen.EstimateMerchantWithdrawal200JSONResponse(out), nil
}

// EstimateWithdrawal is the secret-key twin of EstimateMerchantWithdrawal, for the key's
// merchant and mode.
func (h *handlers) EstimateWithdrawal(ctx context.Context, req gen.EstimateWithdrawalRequestObject) (gen.EstimateWithdrawalResponseObject, error) {
	out, err := h.estimateWithdrawal(ctx, merchantFrom(ctx), req.Params.AmountInCents, req.Params.ChainId)
	if err != nil {
		return nil, err
	}
	return gen.EstimateWithdrawal200JSONResponse(out), nil
}

func (h *handlers) estimateWithdrawal(ctx context.Context, m domain.Merchant, cents int64, chain string) (gen.WithdrawalEstimate, error) {
	chainID, err := chains.ParseCAIP2(chain)
	if err != nil {
		return gen.WithdrawalEstimate{}, domain.Invalid(domain.CodeParameterInvalid, "chainId", "%q is not a CAIP-2 EVM chain id", chain)
	}
	tok, err := h.withdrawals.Preview(ctx, m, cents, chainID)
	if err != nil {
		return gen.WithdrawalEstimate{}, err
	}
	var est PayoutEstimator
	if h.estimator != nil {
		est = h.estimator(chainID)
	}
	if est == nil {
		return gen.WithdrawalEstimate{}, fmt.Errorf("%w: no payout manager for %s", domain.ErrPayoutEstimateUnavailable, chains.CAIP2(chainID))
	}
	e, err := est.Estimate(ctx, tok, cents)
	if err != nil {
		return gen.WithdrawalEstimate{}, fmt.Errorf("%w: %w", domain.ErrPayoutEstimateUnavailable, err)
	}
	out := gen.WithdrawalEstimate{ChainId: chains.CAIP2(chainID), TokenSymbol: tok.Symbol, AmountInCents: cents,
		AmountAsset: e.AmountAsset.String(), Rate: e.Rate.String(), HotWalletCanPay: e.HotWalletCanPay, NetworkFeeInCents: e.NetworkFeeCents}
	if e.NetworkFee != nil {
		s := e.NetworkFee.String()
		out.NetworkFeeNative = &s
	}
	if e.HotWallet != "" {
		out.HotWalletAddress = &e.HotWallet
	}
	return out, nil
}
