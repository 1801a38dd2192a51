package server

import (
	"context"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
)

// volumeDays is the overview's window: the last 30 UTC days, today included.
const volumeDays = 30

var paymentStatuses = []domain.PaymentStatus{domain.PaymentPending, domain.PaymentProcessing, domain.PaymentCompleted,
	domain.PaymentFailed, domain.PaymentExpired, domain.PaymentCancelled}

type (
	tokenIntake = struct {
		ChainId             string `json:"chainId"`
		Payments            int64  `json:"payments"`
		ReceivedAmountAsset string `json:"receivedAmountAsset"`
		ReceivedInCents     int64  `json:"receivedInCents"`
		TokenId             string `json:"tokenId"`
		TokenSymbol         string `json:"tokenSymbol"`
	}
	dayVolume = struct {
		AmountInCents int64              `json:"amountInCents"`
		Count         int64              `json:"count"`
		Date          openapi_types.Date `json:"date"`
	}
)

// GetMerchantOverview gathers the home page's figures for the token's mode: four aggregate
// queries (the balance's sum and three GROUP BYs), whatever the merchant's history.
func (h *handlers) GetMerchantOverview(ctx context.Context, _ gen.GetMerchantOverviewRequestObject) (gen.GetMerchantOverviewResponseObject, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return nil, err
	}
	mode := m.Mode.Norm()
	tx := h.payments.Store.Read(ctx)
	avail, err := tx.AvailableBalance(m.ID, mode)
	if err != nil {
		return nil, err
	}
	out := gen.MerchantOverview{Mode: gen.Mode(mode), Currency: gen.Currency("USD"), AvailableInCents: avail,
		BalancesByToken: []tokenIntake{}, PaymentsByStatus: map[string]int64{}, Volume30d: make([]dayVolume, 0, volumeDays)}
	intake, err := tx.IntakeByToken(m.ID, mode)
	if err != nil {
		return nil, err
	}
	for _, i := range intake {
		out.BalancesByToken = append(out.BalancesByToken, tokenIntake{ChainId: chains.CAIP2(i.ChainID), TokenId: i.TokenID,
			TokenSymbol: h.catalog.Tokens[i.TokenID].Symbol, ReceivedInCents: i.Cents, ReceivedAmountAsset: i.Asset.String(), Payments: i.Payments})
	}
	counts, err := tx.PaymentsByStatus(m.ID, mode)
	if err != nil {
		return nil, err
	}
	for _, s := range paymentStatuses {
		out.PaymentsByStatus[string(s)] = counts[s]
	}
	now := h.payments.Now().UTC()
	first := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -(volumeDays - 1))
	days, err := tx.DailyVolume(m.ID, mode, first)
	if err != nil {
		return nil, err
	}
	byDay := map[string]int{}
	for i, d := range days {
		byDay[d.Day] = i
	}
	for i := range volumeDays {
		day := first.AddDate(0, 0, i)
		v := dayVolume{Date: openapi_types.Date{Time: day}}
		if j, ok := byDay[day.Format(time.DateOnly)]; ok {
			v.AmountInCents, v.Count = days[j].Cents, days[j].Count
		}
		out.Volume30d = append(out.Volume30d, v)
	}
	return gen.GetMerchantOverview200JSONResponse(out), nil
}
