// Refunds (issue 23): the list (filters: status, awaiting approval, payment), and one refund's
// detail — its amount, recipient and where the address came from, the customer's claim link
// while it awaits an address, the approval, the receipt once paid — with Cancel (awaiting an
// address or pending) and Approve/Reject when it waits for a second person.
import { useId } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { ApprovalCard, approvalText, CancelButton } from "../approvals";
import { formatCents, formatDate, formatUnits } from "../format";
import { currentQuery, href } from "../router";
import { useMerchant } from "../session";
import { useStepUp } from "../stepup";
import { AwaitingApprovalCheckbox, IdCell, IdFilter, PagedList, StatusCell, StatusFilter, useListFilters } from "../lists";
import { BackLink, chainLabel, CopyButton, Loaded, PageHeader, StatusBadge, useChains, useLive, useLiveReload, type ChainNames } from "../ui";

type Refund = Schemas["Refund"];
type Status = Schemas["RefundStatus"];
const STATUSES: Status[] = ["awaiting_address", "pending", "processing", "completed", "failed", "cancelled"];
const PAGE = 25;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function refundAmount(r: Pick<Refund, "amountAsset" | "tokenDecimals" | "tokenSymbol">): string {
  return `${formatUnits(r.amountAsset, r.tokenDecimals)} ${r.tokenSymbol}`;
}

const SOURCES: Record<string, string> = {
  merchant: "given by the merchant",
  payer_signature: "signed by the paying wallet",
  typed_address: "typed by the customer (needs an approval)",
};

export function RefundList() {
  const { merchantId, mode } = useMerchant();
  const chains = useChains();
  const { filters, setFilter, offset, setOffset } = useListFilters<{ status: Status | ""; awaiting: boolean; paymentId: string }>(() => ({
    status: "",
    awaiting: false,
    paymentId: currentQuery().get("paymentId") ?? "",
  }));
  const { status, awaiting, paymentId } = filters;
  const id = useId();
  const payment = UUID.test(paymentId.trim()) ? paymentId.trim() : "";
  const list = useLive(
    (signal) =>
      unwrap(
        api.GET("/v1/merchants/{merchantId}/refunds", {
          params: {
            path: { merchantId },
            query: {
              limit: PAGE,
              offset,
              ...(status ? { status } : {}),
              ...(awaiting ? { awaitingApproval: true } : {}),
              ...(payment ? { paymentId: payment } : {}),
            },
          },
          signal,
        }),
      ),
    [merchantId, mode, status, awaiting, payment, offset],
  );
  return (
    <>
      <PageHeader title="Refunds" />
      <p className="help">Refund a payment from its page (Payments → a completed payment → Refund).</p>
      <div className="filters refund-filters">
        <StatusFilter id={`${id}-s`} statuses={STATUSES} value={status} onChange={(s) => setFilter("status", s)} />
        <AwaitingApprovalCheckbox id={`${id}-a`} checked={awaiting} onChange={(a) => setFilter("awaiting", a)} />
        <IdFilter
          id={`${id}-p`}
          label="Payment id"
          hint="A complete payment id filters the list."
          value={paymentId}
          onChange={(p) => setFilter("paymentId", p)}
        />
      </div>
      <PagedList
        state={list}
        columns={["Refund", { label: "Amount", num: true }, "Network", "Payment", "Status", "Created"]}
        page={PAGE}
        offset={offset}
        onOffset={setOffset}
        empty={`No refunds${status || awaiting || payment ? " match" : ""} in ${mode} mode.`}
        row={(r) => (
          <tr key={r.id}>
            <IdCell page="refunds" id={r.id} label={`Refund ${r.id}`} />
            <RefundAmountCell r={r} />
            <td>{chainLabel(chains, r.chainId)}</td>
            <IdCell page="payments" id={r.paymentId} label={`Payment ${r.paymentId} of refund ${r.id}`} />
            <StatusCell status={r.status} approval={r.approval} />
            <td>{formatDate(r.createdAt)}</td>
          </tr>
        )}
      />
    </>
  );
}

// RefundAmountCell: the amount sent, and under it the dollars debited.
export function RefundAmountCell({ r }: { r: Pick<Refund, "amountAsset" | "tokenDecimals" | "tokenSymbol" | "amountInCents"> }) {
  return (
    <td className="num">
      {refundAmount(r)}
      <br />
      <span className="muted">{formatCents(r.amountInCents)}</span>
    </td>
  );
}

export function RefundDetail({ id }: { id: string }) {
  const { merchantId, mode, can } = useMerchant();
  const chains = useChains();
  const [r, reload] = useLiveReload(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/refunds/{refundId}", { params: { path: { merchantId, refundId: id } }, signal })),
    [merchantId, mode, id],
  );
  const { guard, prompt } = useStepUp();
  return (
    <>
      <BackLink page="refunds" label="Refunds" />
      <Loaded state={r}>
        {(r) => (
          <>
            <PageHeader title={`Refund of ${refundAmount(r)}`}>
              {(r.status === "awaiting_address" || r.status === "pending") && can("withdrawals:write") ? (
                <CancelButton kind="refund" id={r.id} guard={guard} onDone={reload} />
              ) : null}
            </PageHeader>
            {prompt}
            <ApprovalCard kind="refund" headingId="refund-approval-h" item={r} guard={guard} onDone={reload}>
              {r.recipientSource === "typed_address"
                ? "The customer typed this address on the claim page (no wallet signature): check it with them before approving."
                : "This refund is above the approval threshold: a second person with the admin or owner role approves it before it is sent."}
            </ApprovalCard>
            {r.status === "awaiting_address" && r.claimUrl ? <ClaimLink url={r.claimUrl} expires={r.claimExpiresAt} /> : null}
            <RefundFields r={r} chains={chains} />
          </>
        )}
      </Loaded>
    </>
  );
}

function ClaimLink({ url, expires }: { url: string; expires: string | null }) {
  const id = useId();
  return (
    <section className="card" aria-labelledby={id}>
      <h2 id={id}>Waiting for the customer's address</h2>
      <p>
        Send the customer this link. On it they connect the wallet that paid (a signature proves it: the refund is sent at once) or type another
        address (which then waits for your team's approval). The link expires {formatDate(expires)}; an unclaimed refund is then cancelled and its
        amount returns to the balance.
      </p>
      <div className="field">
        <label htmlFor={`${id}-u`}>Claim link</label>
        <div className="row">
          <input id={`${id}-u`} className="mono" readOnly value={url} onFocus={(e) => e.target.select()} />
          <CopyButton text={url} label="Copy claim link" />
        </div>
      </div>
    </section>
  );
}

function RefundFields({ r, chains }: { r: Refund; chains: ChainNames }) {
  const rc = r.receipt;
  return (
    <div className="card">
      <dl className="fields">
        <dt>Status</dt>
        <dd>
          <span role="status">
            <StatusBadge status={r.status} />
          </span>
        </dd>
        <dt>Amount</dt>
        <dd>
          {refundAmount(r)} ({formatCents(r.amountInCents)} debited from the balance)
        </dd>
        <dt>Network</dt>
        <dd>{chainLabel(chains, r.chainId)}</dd>
        <dt>Recipient</dt>
        <dd>{r.recipientAddress ? <code className="wrap">{r.recipientAddress}</code> : "Not known yet: the customer claims it"}</dd>
        {r.recipientSource ? (
          <>
            <dt>Address</dt>
            <dd>{SOURCES[r.recipientSource] ?? r.recipientSource}</dd>
          </>
        ) : null}
        <dt>Approval</dt>
        <dd>{approvalText(r.approval, r.status)}</dd>
        <dt>Network fee</dt>
        <dd>
          {r.subtractNetworkFee
            ? r.networkFeeAsset !== null
              ? `${formatUnits(r.networkFeeAsset, r.tokenDecimals)} ${r.tokenSymbol} taken from the amount sent`
              : "taken from the amount sent"
            : "paid by the service"}
        </dd>
        <dt>Reason</dt>
        <dd className="wrap">{r.reason ?? "—"}</dd>
        <dt>Payment</dt>
        <dd>
          <a href={href("payments", r.paymentId)}>
            <code className="wrap">{r.paymentId}</code>
          </a>
        </dd>
        <dt>Mode</dt>
        <dd>{r.livemode ? "live" : "test"}</dd>
        <dt>Id</dt>
        <dd>
          <code className="wrap">{r.id}</code>
        </dd>
        {r.errorMessage ? (
          <>
            <dt>Error</dt>
            <dd className="wrap">{r.errorMessage}</dd>
          </>
        ) : null}
        <dt>Created</dt>
        <dd>{formatDate(r.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{formatDate(r.updatedAt)}</dd>
        {rc ? (
          <>
            <dt>Received by the customer</dt>
            <dd>
              {formatUnits(rc.settledAmountAsset, r.tokenDecimals)} {r.tokenSymbol}
            </dd>
            <dt>Transaction</dt>
            <dd>
              <code className="wrap">{rc.txHash}</code>
            </dd>
            <dt>Block</dt>
            <dd>{rc.txBlockNumber}</dd>
            <dt>Gas cost</dt>
            <dd>about {formatCents(Math.ceil(rc.txTotalCostUsdFractions / 10_000))}</dd>
          </>
        ) : null}
      </dl>
    </div>
  );
}
