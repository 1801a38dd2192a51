package server

import (
	"context"
	"encoding/csv"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/chains"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/gen"
	"github.com/paymentsd/paymentsd/store"
)

// The dashboard's CSV exports: RFC 4180 (encoding/csv), streamed a page of exportPage rows at a
// time with keyset paging (memory stays bounded however long the range), every cell
// neutralised against spreadsheet formula injection.

const (
	exportPage     = 500
	maxExportRange = 366 * 24 * time.Hour
)

// neutralise prefixes with ' a cell a spreadsheet would read as a formula or a control: one
// that starts with =, +, -, @, a tab or a carriage return (OWASP's list). Every cell, numbers
// included, so no cell of an export ever starts with one of them.
func neutralise(cell string) string {
	if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
		return "'" + cell
	}
	return cell
}

// parseExportTime reads an RFC 3339 timestamp or a date (its 00:00 UTC).
func parseExportTime(param, s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, domain.Invalid(domain.CodeParameterInvalid, param, "%s must be an RFC 3339 timestamp or a date (YYYY-MM-DD)", param)
}

// exportRange checks [from, to): both readable, from before to, at most 366 days apart.
func exportRange(from, to string) (time.Time, time.Time, error) {
	f, err := parseExportTime("from", from)
	if err != nil {
		return f, f, err
	}
	t, err := parseExportTime("to", to)
	if err != nil {
		return f, t, err
	}
	if !f.Before(t) {
		return f, t, domain.Invalid(domain.CodeParameterInvalid, "to", "to must be after from")
	}
	if t.Sub(f) > maxExportRange {
		return f, t, domain.Invalid(domain.CodeParameterInvalid, "to", "to must be at most 366 days after from")
	}
	return f, t, nil
}

// csvExport is a streamed CSV answer: header, then pages from next until it returns none.
// Once the first byte is sent the status is 200; a failure after that aborts the connection
// (the client sees a truncated transfer, never a complete-looking file).
type csvExport struct {
	ctx      context.Context
	filename string
	header   []string
	next     func() ([][]string, error) // the next page of rows; none: the end
}

func (e csvExport) write(w http.ResponseWriter) error {
	// The first page before any byte: an error there is still a clean 500.
	page, err := e.next()
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="`+e.filename+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	cw := csv.NewWriter(w)
	flusher, _ := w.(http.Flusher)
	put := func(rec []string) error {
		for i := range rec {
			rec[i] = neutralise(rec[i])
		}
		return cw.Write(rec)
	}
	fail := func(err error) error {
		slog.ErrorContext(e.ctx, "csv export aborted", "file", e.filename, "err", err)
		panic(http.ErrAbortHandler)
	}
	if err := put(append([]string(nil), e.header...)); err != nil {
		return fail(err)
	}
	for len(page) > 0 {
		for _, rec := range page {
			if err := put(rec); err != nil {
				return fail(err)
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fail(err)
		}
		if flusher != nil {
			flusher.Flush()
		}
		if page, err = e.next(); err != nil {
			return fail(err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fail(err)
	}
	return nil
}

// VisitExportMerchantPaymentsResponse streams the payments export.
func (e csvExport) VisitExportMerchantPaymentsResponse(w http.ResponseWriter) error {
	return e.write(w)
}

// VisitExportMerchantWithdrawalsResponse streams the withdrawals export.
func (e csvExport) VisitExportMerchantWithdrawalsResponse(w http.ResponseWriter) error {
	return e.write(w)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func optional(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// units is an amount in a token's smallest unit as whole tokens ("" when unknown).
func (h *handlers) units(tokenID string, amount *string) (string, string) {
	if amount == nil {
		return "", ""
	}
	d, err := decimal.NewFromString(*amount)
	if err != nil {
		return *amount, ""
	}
	tok, ok := h.catalog.Tokens[tokenID]
	if !ok {
		return d.String(), ""
	}
	return d.String(), d.Shift(-tok.Decimals).String()
}

func exportFilename(kind string, from, to time.Time) string {
	f := func(t time.Time) string {
		return strings.NewReplacer(":", "", "-", "").Replace(t.Format("2006-01-02T15:04:05Z"))
	}
	return fmt.Sprintf("%s-%s-%s.csv", kind, f(from), f(to))
}

var paymentExportHeader = []string{"id", "createdAt", "updatedAt", "type", "status", "amountInCents", "amountDueCents",
	"amountMerchantNetCents", "currency", "chainId", "tokenSymbol", "amountAsset", "amountAssetUnits", "txHash",
	"depositAddress", "orderId", "customerRefId"}

var withdrawalExportHeader = []string{"id", "createdAt", "updatedAt", "status", "amountInCents", "currency", "chainId",
	"tokenSymbol", "amountAsset", "amountAssetUnits", "recipientAddress", "txHash", "orderId"}

// exportCSV answers an export of the acting merchant's rows of kind, created in the asked range
// [from, to): read gets the page after a cursor, at gives a row's place in the (createdAt, id)
// order, record its CSV fields. The rows are read a page at a time as the answer is written.
func exportCSV[R any](ctx context.Context, kind string, header []string, fromParam, toParam string,
	read func(m domain.Merchant, from, to time.Time, cur store.ExportCursor) ([]R, error),
	at func(R) store.ExportCursor, record func(R) []string) (csvExport, error) {
	m, err := actingAs(ctx)
	if err != nil {
		return csvExport{}, err
	}
	from, to, err := exportRange(fromParam, toParam)
	if err != nil {
		return csvExport{}, err
	}
	var cur store.ExportCursor
	done := false
	next := func() ([][]string, error) {
		if done {
			return nil, nil
		}
		rows, err := read(m, from, to, cur)
		if err != nil {
			return nil, err
		}
		done = len(rows) < exportPage
		out := make([][]string, len(rows))
		for i, r := range rows {
			cur = at(r)
			out[i] = record(r)
		}
		return out, nil
	}
	return csvExport{ctx: ctx, filename: exportFilename(kind, from, to), header: header, next: next}, nil
}

func (h *handlers) ExportMerchantPayments(ctx context.Context, req gen.ExportMerchantPaymentsRequestObject) (gen.ExportMerchantPaymentsResponseObject, error) {
	read := func(m domain.Merchant, from, to time.Time, cur store.ExportCursor) ([]store.PaymentExportRow, error) {
		return h.payments.Store.Read(ctx).ExportPayments(m.ID, m.Mode.Norm(), from, to, cur, exportPage)
	}
	at := func(r store.PaymentExportRow) store.ExportCursor {
		return store.ExportCursor{CreatedAt: r.CreatedAt, ID: r.ID}
	}
	record := func(r store.PaymentExportRow) []string {
		var chain, symbol, token string
		if r.ChainID != nil {
			chain = chains.CAIP2(*r.ChainID)
		}
		if r.TokenID != nil {
			token = *r.TokenID
			symbol = h.catalog.Tokens[token].Symbol
		}
		amount, units := h.units(token, r.SettledAmountAsset)
		return []string{r.ID.String(), stamp(r.CreatedAt), stamp(r.UpdatedAt), r.Type, r.Status,
			strconv.FormatInt(r.AmountInCents, 10), strconv.FormatInt(r.AmountDueCents, 10),
			strconv.FormatInt(r.AmountMerchantNetCents, 10), r.Currency, chain, symbol, amount, units,
			optional(r.TxHash), optional(r.DepositAddress), optional(r.OrderID), optional(r.CustomerRefID)}
	}
	e, err := exportCSV(ctx, "payments", paymentExportHeader, req.Params.From, req.Params.To, read, at, record)
	if err != nil {
		return nil, err
	}
	return e, nil
}

func (h *handlers) ExportMerchantWithdrawals(ctx context.Context, req gen.ExportMerchantWithdrawalsRequestObject) (gen.ExportMerchantWithdrawalsResponseObject, error) {
	read := func(m domain.Merchant, from, to time.Time, cur store.ExportCursor) ([]store.WithdrawalExportRow, error) {
		return h.payments.Store.Read(ctx).ExportWithdrawals(m.ID, m.Mode.Norm(), from, to, cur, exportPage)
	}
	at := func(r store.WithdrawalExportRow) store.ExportCursor {
		return store.ExportCursor{CreatedAt: r.CreatedAt, ID: r.ID}
	}
	record := func(r store.WithdrawalExportRow) []string {
		amount, units := h.units(r.TokenID, r.SettledAmountAsset)
		return []string{r.ID.String(), stamp(r.CreatedAt), stamp(r.UpdatedAt), r.Status,
			strconv.FormatInt(r.AmountInCents, 10), r.Currency, chains.CAIP2(r.ChainID), h.catalog.Tokens[r.TokenID].Symbol,
			amount, units, r.RecipientAddress, optional(r.TxHash), optional(r.OrderID)}
	}
	e, err := exportCSV(ctx, "withdrawals", withdrawalExportHeader, req.Params.From, req.Params.To, read, at, record)
	if err != nil {
		return nil, err
	}
	return e, nil
}
