// A payment's refunds, on its detail page (issue 23): what was refunded, the refunds made, and —
// for a completed payment, to people who may move money — "Refund" (an amount in US dollars or
// in the settled token, an optional address, a reason, whether the network fee comes out of it)
// and, when the customer paid more than was due, "Refund the overpaid amount" (the form filled
// with exactly the excess, in the token's smallest unit). A review step shows what will happen;
// only "Confirm refund" creates it, with one Idempotency-Key per review.
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { api, idempotencyKey, unwrap, type Schemas } from "../api/client";
import { excessUnits, formatCents, formatDate, formatUnits, parseDollars, parseUnits } from "../format";
import { IdCell, StatusCell } from "../lists";
import { navigate } from "../router";
import { useMerchant } from "../session";
import { useStepUp } from "../stepup";
import { DataTable, ErrorMessage, FocusedHeading, ReviewActions, useLive, useSubmit } from "../ui";
import { refundAmount } from "./Refunds";

type Payment = Schemas["Payment"];
type Receipt = NonNullable<Payment["receipt"]>;
type Refund = Schemas["Refund"];

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

// overpaidBy: what the customer sent over the quote's amount, in the settled token's smallest
// unit (a payment, not a deposit, whose amount is whatever arrives).
export function overpaidBy(p: Payment): string | null {
  if (p.type !== "payment" || !p.receipt) return null;
  return excessUnits(p.receipt.settledAmountAsset, p.receipt.selectedQuote.expectedAmountAsset);
}

export function PaymentRefunds({ p }: { p: Payment }) {
  const { merchantId, mode, can } = useMerchant();
  const list = useLive(
    (signal) =>
      unwrap(api.GET("/v1/merchants/{merchantId}/refunds", { params: { path: { merchantId }, query: { paymentId: p.id, limit: 100 } }, signal })),
    [merchantId, mode, p.id],
  );
  const [form, setForm] = useState<{ unit: "usd" | "token"; amount: string; reason: string; overpaid: boolean } | null>(null);
  const refunds = list.status === "ok" ? list.data.data : [];
  const excess = overpaidBy(p);
  const r = p.receipt;
  // The excess already given back (by this page or the checkout page's offer): not offered twice.
  const excessRefunded = excess !== null && refunds.some((x) => x.amountAsset === excess && x.status !== "failed" && x.status !== "cancelled");
  const refundable = p.status === "completed" && r !== null && can("withdrawals:write");
  return (
    <section className="card" aria-labelledby="pay-refunds">
      <div className="row spread">
        <h2 id="pay-refunds">Refunds</h2>
        {refundable && !form ? (
          <div className="row">
            <button type="button" className="button secondary" onClick={() => setForm({ unit: "usd", amount: "", reason: "", overpaid: false })}>
              Refund
            </button>
            {excess !== null && !excessRefunded ? (
              <button
                type="button"
                className="button"
                onClick={() => setForm({ unit: "token", amount: formatUnits(excess, r.settledToken.decimals), reason: "Overpaid", overpaid: true })}
              >
                Refund the overpaid amount
              </button>
            ) : null}
          </div>
        ) : null}
      </div>
      <dl className="facts">
        <dt>Refunded</dt>
        <dd>{formatCents(p.amountRefundedCents ?? 0)}</dd>
        {r ? (
          <>
            <dt>Settled</dt>
            <dd>
              {formatUnits(r.settledAmountAsset, r.settledToken.decimals)} {r.settledToken.symbol} (${r.settledAmountUsd})
            </dd>
          </>
        ) : null}
        {excess !== null && r ? (
          <>
            <dt>Overpaid by</dt>
            <dd>
              {formatUnits(excess, r.settledToken.decimals)} {r.settledToken.symbol}
              {excessRefunded ? " (refunded)" : ""}
            </dd>
          </>
        ) : null}
      </dl>
      {form && r ? <RefundForm key={form.overpaid ? "over" : "any"} payment={p} receipt={r} initial={form} onCancel={() => setForm(null)} /> : null}
      {refunds.length > 0 ? <RefundRows refunds={refunds} /> : list.status === "ok" ? <p className="muted">No refunds of this payment.</p> : null}
    </section>
  );
}

function RefundRows({ refunds }: { refunds: Refund[] }) {
  return (
    <DataTable columns={["Refund", { label: "Amount", num: true }, "Status", "Created"]}>
      {refunds.map((x) => (
        <tr key={x.id}>
          <IdCell page="refunds" id={x.id} label={`Refund ${x.id}`} />
          <td className="num">{refundAmount(x)}</td>
          <StatusCell status={x.status} approval={x.approval} />
          <td>{formatDate(x.createdAt)}</td>
        </tr>
      ))}
    </DataTable>
  );
}

function RefundForm({
  payment,
  receipt,
  initial,
  onCancel,
}: {
  payment: Payment;
  receipt: Receipt;
  initial: { unit: "usd" | "token"; amount: string; reason: string; overpaid: boolean };
  onCancel: () => void;
}) {
  const { merchantId, mode } = useMerchant();
  const tok = receipt.settledToken;
  const [unit, setUnit] = useState(initial.unit);
  const [amount, setAmount] = useState(initial.amount);
  const [recipient, setRecipient] = useState("");
  const [reason, setReason] = useState(initial.reason);
  const [subtractFee, setSubtractFee] = useState(false);
  const [review, setReview] = useState<{ body: Schemas["CreateRefundRequest"]; key: string } | null>(null);
  const { busy, error, setError, submit: send } = useSubmit();
  const { guard, prompt } = useStepUp();
  const id = useId();
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    const body: Schemas["CreateRefundRequest"] = { subtractNetworkFee: subtractFee };
    if (unit === "usd") {
      const cents = parseDollars(amount);
      if (cents === null || cents < 1) return setError("Enter the amount in dollars, like 12 or 12.50.");
      body.amountInCents = cents;
    } else {
      const units = parseUnits(amount, tok.decimals);
      if (units === null) return setError(`Enter the amount in ${tok.symbol}, like 1.5 (at most ${tok.decimals} decimals).`);
      body.amountAsset = units;
    }
    const to = recipient.trim();
    if (to && !ADDRESS.test(to)) return setError("The address is 0x followed by 40 hexadecimal characters; or leave it empty for a claim link.");
    if (to) body.recipientAddress = to;
    if (reason.trim()) body.reason = reason.trim();
    setReview({ body, key: idempotencyKey() });
  };

  if (review) {
    const b = review.body;
    return (
      <section className="subcard" aria-labelledby={`${id}-rh`}>
        <FocusedHeading id={`${id}-rh`} level={3}>Review the refund</FocusedHeading>
        <dl className="fields">
          <dt>Amount</dt>
          <dd>
            {b.amountAsset !== undefined
              ? `${formatUnits(b.amountAsset, tok.decimals)} ${tok.symbol}${initial.overpaid && b.amountAsset === overpaidBy(payment) ? " (exactly the overpaid amount)" : ""}`
              : `${formatCents(b.amountInCents ?? 0)} in ${tok.symbol}, at the current rate`}
          </dd>
          <dt>Network</dt>
          <dd>{receipt.settledChain.name}</dd>
          <dt>To</dt>
          <dd>
            {b.recipientAddress ? (
              <code className="wrap">{b.recipientAddress}</code>
            ) : (
              "The customer's address, from a claim link you send them (shown once the refund is made)"
            )}
          </dd>
          <dt>Network fee</dt>
          <dd>{b.subtractNetworkFee ? "taken from the amount sent" : "paid by the service"}</dd>
          {b.reason ? (
            <>
              <dt>Reason</dt>
              <dd className="wrap">{b.reason}</dd>
            </>
          ) : null}
          <dt>Mode</dt>
          <dd>{mode === "live" ? "live money" : "test money"}</dd>
        </dl>
        <p className="help">The amount is taken from your balance now, and returns to it if the refund is cancelled or fails.</p>
        <ReviewActions
          prompt={prompt}
          error={error}
          busy={busy}
          label="Confirm refund"
          busyLabel="Refunding…"
          onConfirm={() =>
            send(
              () =>
                guard(() =>
                  unwrap(
                    api.POST("/v1/merchants/{merchantId}/payments/{paymentId}/refunds", {
                      params: { path: { merchantId, paymentId: payment.id }, header: { "Idempotency-Key": review.key } },
                      body: review.body,
                    }),
                  ),
                ),
              (made) => navigate("refunds", made.id),
            )
          }
          onEdit={() => setReview(null)}
        />
      </section>
    );
  }

  return (
    <form className="subcard" onSubmit={submit} aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>{initial.overpaid ? "Refund the overpaid amount" : "Refund this payment"}</h3>
      <fieldset>
        <legend>Amount in</legend>
        <label className="check">
          <input ref={unit === "usd" ? first : undefined} type="radio" name={`${id}-unit`} checked={unit === "usd"} onChange={() => setUnit("usd")} />
          US dollars
        </label>
        <label className="check">
          <input ref={unit === "token" ? first : undefined} type="radio" name={`${id}-unit`} checked={unit === "token"} onChange={() => setUnit("token")} />
          {tok.symbol}
        </label>
      </fieldset>
      <div className="field">
        <label htmlFor={`${id}-a`}>{unit === "usd" ? "Amount (USD)" : `Amount (${tok.symbol})`}</label>
        <input id={`${id}-a`} inputMode="decimal" required value={amount} onChange={(e) => setAmount(e.target.value)} aria-describedby={`${id}-ah`} />
        <p className="help" id={`${id}-ah`}>
          {unit === "usd"
            ? `Converted to ${tok.symbol} at the current rate. `
            : `Exactly this much ${tok.symbol} (up to ${tok.decimals} decimals). `}
          The payment settled {formatUnits(receipt.settledAmountAsset, tok.decimals)} {tok.symbol}; {formatCents(payment.amountRefundedCents ?? 0)} is
          refunded already.
        </p>
      </div>
      <div className="field">
        <label htmlFor={`${id}-to`}>Customer's address (optional)</label>
        <input
          id={`${id}-to`}
          className="mono-text"
          spellCheck={false}
          autoComplete="off"
          value={recipient}
          onChange={(e) => setRecipient(e.target.value)}
          aria-describedby={`${id}-toh`}
        />
        <p className="help" id={`${id}-toh`}>
          Leave it empty to get a claim link for the customer: they prove the wallet that paid, or type an address your team approves.
        </p>
      </div>
      <div className="field">
        <label htmlFor={`${id}-r`}>Reason (optional)</label>
        <input id={`${id}-r`} maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
      </div>
      <label className="check" htmlFor={`${id}-f`}>
        <input id={`${id}-f`} type="checkbox" checked={subtractFee} onChange={(e) => setSubtractFee(e.target.checked)} />
        Take the network fee out of the amount sent
      </label>
      <ErrorMessage error={error} />
      <div className="row">
        <button type="submit" className="button">
          Review refund
        </button>
        <button type="button" className="button secondary" onClick={onCancel}>
          Close
        </button>
      </div>
    </form>
  );
}
