package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/paymentsd/paymentsd/app"
	"github.com/paymentsd/paymentsd/domain"
	"github.com/paymentsd/paymentsd/idempotency"
	"github.com/paymentsd/paymentsd/payments"
)

// The operator's state changes: manual settlement and withdrawal cancellation, each safe to
// retry under --idempotency-key.

func cmdPaymentsSettle(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("payments settle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	paymentID := fs.String("payment", "", "payment id (required)")
	quoteID := fs.String("quote", "", "quote id (default: the payment's cheapest active quote)")
	txHash := fs.String("tx-hash", "", "transaction hash, 0x + 64 hex (required)")
	amount := fs.String("amount-asset", "", "amount received in the token's smallest unit (default: the quote's expected amount; required for deposits)")
	key := idempotencyKeyFlag(fs)
	asJSON := fs.Bool("json", false, "print the settled payment as JSON")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	pid, err := uuid.Parse(*paymentID)
	if err != nil || *txHash == "" {
		fmt.Fprintln(stderr, "payments settle: --payment (a payment id) and --tx-hash are required")
		return errUsage
	}
	in := payments.SettleInput{PaymentID: pid, TxHash: *txHash}
	if *quoteID != "" {
		qid, err := uuid.Parse(*quoteID)
		if err != nil {
			return fmt.Errorf("--quote must be a quote id")
		}
		in.QuoteID = &qid
	}
	if *amount != "" {
		d, err := decimal.NewFromString(*amount)
		if err != nil {
			return fmt.Errorf("--amount-asset must be an integer: %w", err)
		}
		in.AmountAsset = &d
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	run := operatorRun{app: a, key: *key, op: "cli:payments.settle", flags: fs, stdout: stdout, stderr: stderr}
	p, body, err := runIdempotent(ctx, run, func() (uuid.UUID, error) { return a.Payments.MerchantOf(ctx, pid) }, settledJSON,
		func(step *idempotency.Step[domain.Payment]) (domain.Payment, error) {
			return a.Payments.Settle(ctx, in, step)
		})
	if err != nil || body == nil {
		return err // failed, or a replay already printed
	}
	if *asJSON {
		_, err := stdout.Write(body)
		return err
	}
	r := p.Receipt
	fmt.Fprintf(stdout, "payment %s completed: %s %s received, merchant credited %d cents\n", p.ID,
		r.SettledAmountAsset, r.Token.Symbol, p.AmountMerchantNetCents)
	return nil
}

func settledJSON(p domain.Payment) any {
	r := p.Receipt
	return map[string]any{"paymentId": p.ID, "status": p.Status, "amountInCents": p.AmountInCents,
		"amountDueCents": p.AmountDueCents, "convenienceFeeCents": p.ConvenienceFeeCents,
		"merchantFeeCents": p.MerchantFeeCents, "swapFeeCents": p.SwapFeeCents,
		"amountMerchantNetCents": p.AmountMerchantNetCents, "quoteId": r.QuoteID, "tokenId": r.Token.ID,
		"settledAmountAsset": r.SettledAmountAsset.String(), "settledAmountUsd": r.SettledAmountUSD.StringFixed(2),
		"txHash": r.TxHash, "processedBy": r.ProcessedBy}
}

func cmdWithdrawalsCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("withdrawals cancel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbURL := commonFlags(fs)
	withdrawalID := fs.String("withdrawal", "", "withdrawal id (required)")
	key := idempotencyKeyFlag(fs)
	asJSON := fs.Bool("json", false, "print the cancelled withdrawal as JSON")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	wid, err := uuid.Parse(*withdrawalID)
	if err != nil {
		fmt.Fprintln(stderr, "withdrawals cancel: --withdrawal (a withdrawal id) is required")
		return errUsage
	}
	a, err := operatorApp(ctx, *dbURL, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	run := operatorRun{app: a, key: *key, op: "cli:withdrawals.cancel", flags: fs, stdout: stdout, stderr: stderr}
	w, body, err := runIdempotent(ctx, run, func() (uuid.UUID, error) { return a.Withdrawals.MerchantOf(ctx, wid) },
		func(w domain.Withdrawal) any {
			return map[string]any{"withdrawalId": w.ID, "merchantId": w.MerchantID, "status": w.Status,
				"amountInCents": w.AmountInCents, "restoredCents": w.AmountInCents}
		},
		func(step *idempotency.Step[domain.Withdrawal]) (domain.Withdrawal, error) {
			return a.Withdrawals.Cancel(ctx, uuid.Nil, "", wid, step) // the operator's: any merchant, any mode
		})
	if err != nil || body == nil {
		return err
	}
	if *asJSON {
		_, err := stdout.Write(body)
		return err
	}
	fmt.Fprintf(stdout, "withdrawal %s cancelled: %d cents restored to the merchant's balance\n", w.ID, w.AmountInCents)
	return nil
}

func idempotencyKeyFlag(fs *flag.FlagSet) *string {
	return fs.String("idempotency-key", "", "make a retry of this command safe: the same key and flags print the first result again")
}

// operatorRun is one operator command that may carry an idempotency key.
type operatorRun struct {
	app            *app.App
	key, op        string
	flags          *flag.FlagSet
	stdout, stderr io.Writer
}

// runIdempotent runs effect with its JSON result sealed under the command's key (when it has
// one), the same Guard the HTTP API uses. The key is scoped to the entity's merchant and hashed
// over the command's flags (not the database URL), so a retry with the same flags prints the
// first result and one with other flags is refused. body is nil when a replay was printed.
func runIdempotent[T any](ctx context.Context, r operatorRun, merchantOf func() (uuid.UUID, error), render func(T) any,
	effect func(*idempotency.Step[T]) (T, error)) (result T, body []byte, err error) {
	var guard *idempotency.Guard
	if r.key != "" {
		merchant, err := merchantOf()
		if err != nil {
			return result, nil, err
		}
		flags := map[string]string{}
		r.flags.Visit(func(f *flag.Flag) {
			if f.Name != "database-url" && f.Name != "json" {
				flags[f.Name] = f.Value.String()
			}
		})
		canon, err := json.Marshal(flags)
		if err != nil {
			return result, nil, err
		}
		req := idempotency.Request{MerchantID: merchant, Key: r.key, Operation: r.op, Hash: idempotency.RequestHash(r.op, canon)}
		out, err := r.app.Keeper.Lookup(ctx, req)
		if err != nil || out != nil {
			return result, nil, r.replay(out, err)
		}
		guard = r.app.Keeper.Guard(req)
	}
	step := idempotency.NewStep(guard, func(v T) (idempotency.Outcome, error) {
		raw, err := json.MarshalIndent(render(v), "", "  ")
		return idempotency.Outcome{Status: 200, Body: append(raw, '\n')}, err
	})
	result, err = effect(step)
	if errors.Is(err, idempotency.ErrDuplicate) { // a concurrent run with the key committed first
		out, err := r.app.Keeper.Replay(ctx, guard.Request())
		return result, nil, r.replay(&out, err)
	}
	if err != nil {
		return result, nil, err
	}
	return result, step.Outcome().Body, nil
}

func (r operatorRun) replay(out *idempotency.Outcome, err error) error {
	if err != nil {
		return err
	}
	fmt.Fprintln(r.stderr, "already done under this idempotency key: the stored result follows")
	_, err = r.stdout.Write(out.Body)
	return err
}
