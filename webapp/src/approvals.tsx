// Approvals (issue 23): a withdrawal or refund above the merchant's approval threshold — or a
// refund to an address its customer typed — waits in `pending` until a second person with the
// admin or owner role approves it (never its creator); rejecting it cancels it. The API refuses
// the creator (403 approval_by_creator) and service tokens (403 forbidden); the page says so
// before anyone clicks: the creator sees Approve turned off with the reason next to it.
// Also here: Cancel, the other action on a withdrawal or refund that has not been sent.
import { useId, useState, type ReactNode } from "react";
import { ApiError, api, idempotencyKey, unwrap, type Schemas } from "./api/client";
import { formatDate } from "./format";
import { useMerchant, useSession } from "./session";
import { ConfirmButton, ErrorMessage, errorText } from "./ui";

export type Approval = Schemas["Approval"];
export type Outflow = "withdrawal" | "refund";
// Guard: a page's step-up guard (useStepUp).
export type Guard = <T>(action: () => Promise<T>) => Promise<T>;

// waiting: an approval is required and not given yet (the payout manager does not send it).
export function waiting(a: Approval | undefined, status: string): boolean {
  return !!a && a.required && a.approvedAt === null && status === "pending";
}

export function approvalText(a: Approval | undefined, status: string): string {
  if (!a || !a.required) return "Not needed";
  if (a.approvedAt) return `Approved by ${a.approvedBy ?? "a team member"} on ${formatDate(a.approvedAt)}`;
  if (status === "pending") return "Waiting for a second person's approval";
  return "Needed; not given";
}

function approve(kind: Outflow, merchantId: string, id: string): Promise<unknown> {
  return kind === "withdrawal"
    ? unwrap(api.POST("/v1/merchants/{merchantId}/withdrawals/{withdrawalId}/approve", { params: { path: { merchantId, withdrawalId: id } } }))
    : unwrap(api.POST("/v1/merchants/{merchantId}/refunds/{refundId}/approve", { params: { path: { merchantId, refundId: id } } }));
}

function reject(kind: Outflow, merchantId: string, id: string): Promise<unknown> {
  return kind === "withdrawal"
    ? unwrap(api.POST("/v1/merchants/{merchantId}/withdrawals/{withdrawalId}/reject", { params: { path: { merchantId, withdrawalId: id } } }))
    : unwrap(api.POST("/v1/merchants/{merchantId}/refunds/{refundId}/reject", { params: { path: { merchantId, refundId: id } } }));
}

// ApprovalActions: Approve and Reject for one waiting withdrawal or refund. guard is the page's
// step-up guard (both operations are x-second-factor: recent); onDone reloads the page's data.
export function ApprovalActions({
  kind,
  id,
  approval,
  status,
  guard,
  onDone,
}: {
  kind: Outflow;
  id: string;
  approval: Approval | undefined;
  status: string;
  guard: Guard;
  onDone: () => void;
}) {
  const s = useSession();
  const { merchantId, can } = useMerchant();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [refusedAsCreator, setRefusedAsCreator] = useState(false);
  const whyId = useId();
  if (!waiting(approval, status) || !can("withdrawals:write") || s.state.status !== "signed_in") return null;
  const session = s.state.session;
  const me = session.me;
  const service = session.kind !== "person" || me === null;
  const mine = refusedAsCreator || (!!me && !!approval?.createdBy && approval.createdBy === me.id);
  const why = service
    ? "An approval is a person's: sign in with your own account to approve or reject."
    : mine
      ? `You created this ${kind}, so a second person with the admin or owner role must approve it. You can still reject it.`
      : null;
  return (
    <div className="approval-actions">
      <div className="row">
        <button
          type="button"
          className="button"
          disabled={busy || why !== null}
          aria-label={`Approve ${kind} ${id}`}
          aria-describedby={why ? whyId : undefined}
          onClick={() => {
            setBusy(true);
            setError(null);
            guard(() => approve(kind, merchantId, id))
              .then(onDone, (e: unknown) => {
                if (e instanceof ApiError && e.code === "approval_by_creator") setRefusedAsCreator(true);
                else setError(errorText(e));
              })
              .finally(() => setBusy(false));
          }}
        >
          {busy ? "Working…" : "Approve"}
        </button>
        {service ? (
          <button type="button" className="button danger-outline" disabled aria-label={`Reject ${kind} ${id}`} aria-describedby={whyId}>
            Reject
          </button>
        ) : (
          <ConfirmButton
            label="Reject"
            ariaLabel={`Reject ${kind} ${id}`}
            confirmLabel="Yes, reject it"
            confirmAriaLabel={`Yes, reject ${kind} ${id}`}
            question={`Reject this ${kind}? It is cancelled and its amount returns to the balance.`}
            onConfirm={async () => {
              await guard(() => reject(kind, merchantId, id));
              onDone();
            }}
          />
        )}
      </div>
      {why ? (
        <p className="help" id={whyId}>
          {why}
        </p>
      ) : null}
      <ErrorMessage error={error} />
    </div>
  );
}

// ApprovalCard: on a withdrawal's or refund's page while it waits for an approval, why it waits
// (children) and Approve/Reject.
export function ApprovalCard({
  kind,
  headingId,
  item,
  guard,
  onDone,
  children,
}: {
  kind: Outflow;
  headingId: string;
  item: { id: string; approval?: Approval | undefined; status: string };
  guard: Guard;
  onDone: () => void;
  children: ReactNode;
}) {
  if (!waiting(item.approval, item.status)) return null;
  return (
    <section className="card warning-card" aria-labelledby={headingId}>
      <h2 id={headingId}>Waiting for approval</h2>
      <p>{children}</p>
      <ApprovalActions kind={kind} id={item.id} approval={item.approval} status={item.status} guard={guard} onDone={onDone} />
    </section>
  );
}

function cancel(kind: Outflow, merchantId: string, id: string, key: string): Promise<unknown> {
  const header = { "Idempotency-Key": key };
  return kind === "withdrawal"
    ? unwrap(api.POST("/v1/merchants/{merchantId}/withdrawals/{withdrawalId}/cancel", { params: { path: { merchantId, withdrawalId: id }, header } }))
    : unwrap(api.POST("/v1/merchants/{merchantId}/refunds/{refundId}/cancel", { params: { path: { merchantId, refundId: id }, header } }));
}

// CancelButton: "Cancel withdrawal" or "Cancel refund", asked once more, with one
// Idempotency-Key per confirmation; onDone (if any) reloads the page's data.
export function CancelButton({ kind, id, guard, onDone }: { kind: Outflow; id: string; guard: Guard; onDone?: () => void }) {
  const { merchantId } = useMerchant();
  return (
    <ConfirmButton
      label={`Cancel ${kind}`}
      confirmLabel="Yes, cancel it"
      question={`Cancel this ${kind}? Its amount returns to the available balance.`}
      onConfirm={async () => {
        const key = idempotencyKey();
        await guard(() => cancel(kind, merchantId, id, key));
        onDone?.();
      }}
    />
  );
}
