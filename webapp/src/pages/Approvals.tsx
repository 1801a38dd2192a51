// Approvals (issue 23): the withdrawals and refunds waiting for a second person
// (`awaitingApproval=true` on both lists), each with Approve and Reject. Live, like the other
// lists: one approved elsewhere leaves the page within a poll.
import type { ReactNode } from "react";
import { api, unwrap } from "../api/client";
import { ApprovalActions, type Approval, type Guard, type Outflow } from "../approvals";
import { formatCents, formatDate } from "../format";
import { IdCell } from "../lists";
import { useMerchant } from "../session";
import { useStepUp } from "../stepup";
import { ACTIONS, chainLabel, Loaded, PageHeader, TableSection, useChains, useLiveReload, type ChainNames, type Column } from "../ui";
import { RefundAmountCell } from "./Refunds";

const WHY: Record<string, string> = {
  typed_address: "address typed by the customer: check it with them",
};

export function Approvals() {
  const { merchantId, mode, can } = useMerchant();
  const chains = useChains();
  const { guard, prompt } = useStepUp();
  const [data, reload] = useLiveReload(
    (signal) =>
      Promise.all([
        unwrap(
          api.GET("/v1/merchants/{merchantId}/withdrawals", {
            params: { path: { merchantId }, query: { awaitingApproval: true, limit: 100 } },
            signal,
          }),
        ),
        can("payments:read")
          ? unwrap(api.GET("/v1/merchants/{merchantId}/refunds", { params: { path: { merchantId }, query: { awaitingApproval: true, limit: 100 } }, signal }))
          : Promise.resolve(null),
      ]),
    [merchantId, mode],
  );
  return (
    <>
      <PageHeader title="Approvals" />
      <p className="help">
        Withdrawals and refunds above the approval threshold (Settings → Payout settings), and refunds to an address a customer typed, wait here until
        a second person with the admin or owner role approves them. Whoever created one cannot approve it; rejecting cancels it and returns its amount
        to the balance.
      </p>
      {prompt}
      <Loaded state={data}>
        {([ws, rs]) => (
          <>
            <TableSection
              id="appr-w"
              title="Withdrawals"
              columns={waitingColumns("Withdrawal")}
              items={ws.data}
              empty="No withdrawals wait for an approval."
              row={(w) => (
                <WaitingRow
                  key={w.id}
                  kind="withdrawal"
                  item={w}
                  amountCell={<td className="num">{formatCents(w.amountInCents)}</td>}
                  chains={chains}
                  guard={guard}
                  onDone={reload}
                >
                  <code className="wrap">{w.recipientAddress}</code>
                </WaitingRow>
              )}
            />
            {rs ? (
              <TableSection
                id="appr-r"
                title="Refunds"
                columns={waitingColumns("Refund")}
                items={rs.data}
                empty="No refunds wait for an approval."
                row={(r) => (
                  <WaitingRow key={r.id} kind="refund" item={r} amountCell={<RefundAmountCell r={r} />} chains={chains} guard={guard} onDone={reload}>
                    <code className="wrap">{r.recipientAddress ?? "—"}</code>
                    {r.recipientSource && WHY[r.recipientSource] ? (
                      <>
                        <br />
                        <span className="muted">{WHY[r.recipientSource]}</span>
                      </>
                    ) : null}
                  </WaitingRow>
                )}
              />
            ) : null}
          </>
        )}
      </Loaded>
    </>
  );
}

function waitingColumns(what: string): Column[] {
  return [what, { label: "Amount", num: true }, "Network", "Recipient", "Created", ACTIONS];
}

// WaitingRow: a withdrawal or refund waiting for an approval, its recipient (children) and
// Approve/Reject.
function WaitingRow({
  kind,
  item,
  amountCell,
  chains,
  guard,
  onDone,
  children,
}: {
  kind: Outflow;
  item: { id: string; chainId: string; createdAt: string; approval?: Approval | undefined; status: string };
  amountCell: ReactNode;
  chains: ChainNames;
  guard: Guard;
  onDone: () => void;
  children: ReactNode;
}) {
  return (
    <tr>
      <IdCell page={`${kind}s`} id={item.id} label={`${kind === "withdrawal" ? "Withdrawal" : "Refund"} ${item.id}`} />
      {amountCell}
      <td>{chainLabel(chains, item.chainId)}</td>
      <td>{children}</td>
      <td>{formatDate(item.createdAt)}</td>
      <td>
        <ApprovalActions kind={kind} id={item.id} approval={item.approval} status={item.status} guard={guard} onDone={onDone} />
      </td>
    </tr>
  );
}
