import { useId, useState, type FormEvent } from "react";
import { api, idempotencyKey, unwrap, type Schemas } from "../api/client";
import { formatCents, formatDate, parseDollars } from "../format";
import { href, navigate } from "../router";
import { useMerchant } from "../session";
import { ApprovalCard, approvalText, CancelButton } from "../approvals";
import { useStepUp } from "../stepup";
import { AwaitingApprovalCheckbox, IdCell, PagedList, StatusCell, StatusFilter, useListFilters } from "../lists";
import { BackLink, chainLabel, ErrorMessage, ExportCsv, FocusedHeading, Loaded, PageHeader, ReviewActions, StatusBadge, useChains, useLive, useLiveReload, useLoad, useSubmit } from "../ui";
import { Estimate, PolicyNotes, SavedRecipients } from "./WithdrawalReview";

type Withdrawal = Schemas["Withdrawal"];
type Status = Schemas["WithdrawalStatus"];
const STATUSES: Status[] = ["pending", "processing", "completed", "failed", "cancelled"];
const PAGE = 25;

export function WithdrawalList() {
  const { merchantId, mode } = useMerchant();
  const chains = useChains();
  const { filters, setFilter, offset, setOffset } = useListFilters<{ status: Status | ""; awaiting: boolean }>({ status: "", awaiting: false });
  const { status, awaiting } = filters;
  // Live, like the payments: a withdrawal's progress to completed shows without a reload.
  const list = useLive(
    (signal) =>
      unwrap(
        api.GET("/v1/merchants/{merchantId}/withdrawals", {
          params: { path: { merchantId }, query: { limit: PAGE, offset, ...(status ? { status } : {}), ...(awaiting ? { awaitingApproval: true } : {}) } },
          signal,
        }),
      ),
    [merchantId, mode, status, awaiting, offset],
  );
  return (
    <>
      <NewWithdrawalHeader title="Withdrawals" />
      <div className="filters">
        <StatusFilter id="wd-status" statuses={STATUSES} value={status} onChange={(s) => setFilter("status", s)} />
        <AwaitingApprovalCheckbox id="wd-awaiting" checked={awaiting} onChange={(a) => setFilter("awaiting", a)} />
      </div>
      <PagedList
        state={list}
        columns={["Withdrawal", { label: "Amount", num: true }, "Network", "Status", "Created"]}
        page={PAGE}
        offset={offset}
        onOffset={setOffset}
        empty={
          <>
            No withdrawals{status ? ` with status ${status}` : ""}
            {awaiting ? " awaiting approval" : ""} in {mode} mode.
          </>
        }
        row={(w) => (
          <tr key={w.id}>
            <IdCell page="withdrawals" id={w.id} label={`Withdrawal ${w.id}`} />
            <td className="num">{formatCents(w.amountInCents)}</td>
            <td>{chainLabel(chains, w.chainId)}</td>
            <StatusCell status={w.status} approval={w.approval} />
            <td>{formatDate(w.createdAt)}</td>
          </tr>
        )}
      />
      <ExportCsv
        what="withdrawals"
        fetchCsv={(from, to) =>
          unwrap(api.GET("/v1/merchants/{merchantId}/exports/withdrawals.csv", { params: { path: { merchantId }, query: { from, to } }, parseAs: "blob" }))
        }
      />
    </>
  );
}

// NewWithdrawalHeader: a page's header with the "New withdrawal" button for people who may move
// money.
export function NewWithdrawalHeader({ title }: { title: string }) {
  const { can } = useMerchant();
  return (
    <PageHeader title={title}>
      {can("withdrawals:write") ? (
        <a className="button" href={href("withdrawals", "new")}>
          New withdrawal
        </a>
      ) : null}
    </PageHeader>
  );
}

export function WithdrawalDetail({ id }: { id: string }) {
  const { merchantId, mode, can } = useMerchant();
  const chains = useChains();
  const [w, reload] = useLiveReload(
    (signal) =>
      unwrap(api.GET("/v1/merchants/{merchantId}/withdrawals/{withdrawalId}", { params: { path: { merchantId, withdrawalId: id } }, signal })),
    [merchantId, mode, id],
  );
  const { guard, prompt } = useStepUp();
  return (
    <>
      <BackLink page="withdrawals" label="Withdrawals" />
      <Loaded state={w}>
        {(w) => (
          <>
            <PageHeader title={`Withdrawal of ${formatCents(w.amountInCents)}`}>
              {w.status === "pending" && can("withdrawals:write") ? (
                <CancelButton kind="withdrawal" id={w.id} guard={guard} /> // no reload: the live detail shows it cancelled within a poll
              ) : null}
            </PageHeader>
            {prompt}
            <ApprovalCard kind="withdrawal" headingId="wd-approval-h" item={w} guard={guard} onDone={reload}>
              This withdrawal is above the approval threshold: a second person with the admin or owner role approves it before it is sent.
            </ApprovalCard>
            <WithdrawalFields w={w} chainName={chainLabel(chains, w.chainId)} />
          </>
        )}
      </Loaded>
    </>
  );
}

function WithdrawalFields({ w, chainName }: { w: Withdrawal; chainName: string }) {
  const r = w.receipt ?? null;
  return (
    <div className="card">
      <dl className="fields">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={w.status} />
        </dd>
        <dt>Amount</dt>
        <dd>{formatCents(w.amountInCents)}</dd>
        <dt>Network</dt>
        <dd>{chainName}</dd>
        <dt>Recipient</dt>
        <dd>
          <code className="wrap">{w.recipientAddress}</code>
        </dd>
        <dt>Approval</dt>
        <dd>{approvalText(w.approval, w.status)}</dd>
        <dt>Mode</dt>
        <dd>{w.livemode ? "live" : "test"}</dd>
        <dt>Id</dt>
        <dd>
          <code className="wrap">{w.id}</code>
        </dd>
        {w.orderId ? (
          <>
            <dt>Order id</dt>
            <dd>{w.orderId}</dd>
          </>
        ) : null}
        {w.errorMessage ? (
          <>
            <dt>Error</dt>
            <dd>{w.errorMessage}</dd>
          </>
        ) : null}
        <dt>Created</dt>
        <dd>{formatDate(w.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{formatDate(w.updatedAt)}</dd>
        {r ? (
          <>
            <dt>Paid</dt>
            <dd>
              {r.settledAmountAsset} {r.settledToken.symbol} (≈ ${r.settledAmountUsd})
            </dd>
            <dt>Transaction</dt>
            <dd>
              <code className="wrap">{r.txHash}</code>
            </dd>
            <dt>Network fee</dt>
            <dd>{r.txIsSponsored ? "sponsored" : r.txTotalCost}</dd>
          </>
        ) : null}
      </dl>
    </div>
  );
}

// New withdrawal: a form (amount in dollars, network, recipient), then a review step showing
// exactly what will be sent; only "Confirm withdrawal" creates it. One Idempotency-Key per
// review, so a double click or a retry after a lost answer makes one withdrawal.
// The review shows GET …/withdrawals/estimate: the token amount at the current rate, the network
// fee, and whether the hot wallet can pay it now.
export function NewWithdrawal() {
  const { merchantId, mode } = useMerchant();
  const chains = useChains();
  const [config] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/withdrawals/config", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  const [balance] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/balance", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  const [amount, setAmount] = useState("");
  const [chainId, setChainId] = useState("");
  const [recipient, setRecipient] = useState("");
  const [review, setReview] = useState<{ body: Schemas["CreateWithdrawalRequest"]; key: string } | null>(null);
  const { busy, error, setError, submit: send } = useSubmit();
  const ids = { amount: useId(), chain: useId(), to: useId(), amountHelp: useId() };
  const { guard, prompt } = useStepUp();

  return (
    <>
      <BackLink page="withdrawals" label="Withdrawals" />
      <PageHeader title="New withdrawal" />
      <Loaded state={config}>
        {(cfg) => {
          if (!cfg.withdrawalsEnabled) {
            return (
              <p className="card">
                Withdrawals are turned off for this merchant. <a href={href("settings", "withdrawals")}>Withdrawal settings</a>
              </p>
            );
          }
          const selected = chainId || cfg.chainIds[0] || "";
          const submit = (e: FormEvent) => {
            e.preventDefault();
            setError(null);
            const cents = parseDollars(amount);
            if (cents === null) return setError("Enter the amount in dollars, like 125 or 125.50.");
            if (cents < cfg.minAmountInCents || cents > cfg.maxAmountInCents) {
              return setError(`The amount must be between ${formatCents(cfg.minAmountInCents)} and ${formatCents(cfg.maxAmountInCents)}.`);
            }
            if (!selected) return setError("Choose a network.");
            if (!recipient.trim()) return setError("Enter the recipient address.");
            setReview({
              body: { amountInCents: cents, chainId: selected, recipientAddress: recipient.trim(), currency: "USD" },
              key: idempotencyKey(),
            });
          };
          if (review) {
            return (
              <section className="card" aria-labelledby="review-h">
                <FocusedHeading id="review-h">Review the withdrawal</FocusedHeading>
                <dl className="fields">
                  <dt>Amount</dt>
                  <dd>
                    {formatCents(review.body.amountInCents)} in {cfg.tokenSymbol}
                  </dd>
                  <dt>Network</dt>
                  <dd>{chainLabel(chains, review.body.chainId)}</dd>
                  <dt>Recipient</dt>
                  <dd>
                    <code className="wrap">{review.body.recipientAddress}</code>
                  </dd>
                  <dt>Mode</dt>
                  <dd>{mode === "live" ? "live money" : "test money"}</dd>
                </dl>
                <Estimate amountInCents={review.body.amountInCents} chainId={review.body.chainId} />
                <PolicyNotes amountInCents={review.body.amountInCents} chainId={review.body.chainId} recipient={review.body.recipientAddress} />
                <ReviewActions
                  prompt={prompt}
                  error={error}
                  busy={busy}
                  label="Confirm withdrawal"
                  busyLabel="Sending…"
                  onConfirm={() =>
                    send(
                      () =>
                        guard(() =>
                          unwrap(
                            api.POST("/v1/merchants/{merchantId}/withdrawals", {
                              params: { path: { merchantId }, header: { "Idempotency-Key": review.key } },
                              body: review.body,
                            }),
                          ),
                        ),
                      (w) => navigate("withdrawals", w.id),
                    )
                  }
                  onEdit={() => setReview(null)}
                />
              </section>
            );
          }
          return (
            <form className="card" onSubmit={submit}>
              {balance.status === "ok" ? (
                <p>
                  Available: <strong>{formatCents(balance.data.availableInCents)}</strong> ({mode} mode)
                </p>
              ) : null}
              <div className="field">
                <label htmlFor={ids.amount}>Amount (USD)</label>
                <input
                  id={ids.amount}
                  inputMode="decimal"
                  required
                  value={amount}
                  onChange={(e) => setAmount(e.target.value)}
                  aria-describedby={ids.amountHelp}
                />
                <p className="help" id={ids.amountHelp}>
                  In dollars, between {formatCents(cfg.minAmountInCents)} and {formatCents(cfg.maxAmountInCents)}; paid in {cfg.tokenSymbol}.
                </p>
              </div>
              <div className="field">
                <label htmlFor={ids.chain}>Network</label>
                <select id={ids.chain} value={selected} onChange={(e) => setChainId(e.target.value)}>
                  {cfg.chainIds.map((c) => (
                    <option key={c} value={c}>
                      {chainLabel(chains, c)}
                    </option>
                  ))}
                </select>
              </div>
              <SavedRecipients chainId={selected} value={recipient} onPick={(a) => a && setRecipient(a)} />
              <div className="field">
                <label htmlFor={ids.to}>Recipient address</label>
                <input id={ids.to} required spellCheck={false} autoComplete="off" value={recipient} onChange={(e) => setRecipient(e.target.value)} />
              </div>
              <ErrorMessage error={error} />
              <button type="submit" className="button">
                Review
              </button>
            </form>
          );
        }}
      </Loaded>
    </>
  );
}
