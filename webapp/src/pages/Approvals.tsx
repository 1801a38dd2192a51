// Approvals (issue 23): the withdrawals and refunds waiting for a second person
// (`awaitingApproval=true` on both lists), each with Approve and Reject. Live, like the other
// lists: one approved elsewhere leaves the page within a poll.
import { api, unwrap, type Schemas } from "../api/client";
import { ApprovalActions } from "../approvals";
import { formatCents, formatDate, shortId } from "../format";
import { href } from "../router";
import { useMerchant } from "../session";
import { useStepUp } from "../stepup";
import { ACTIONS, chainLabel, DataTable, Loaded, PageHeader, useChains, useLiveReload } from "../ui";
import { refundAmount } from "./Refunds";

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
  const done = reload;
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
            <section className="card" aria-labelledby="appr-w">
              <h2 id="appr-w">Withdrawals</h2>
              {ws.data.length === 0 ? (
                <p className="muted">No withdrawals wait for an approval.</p>
              ) : (
                <DataTable columns={["Withdrawal", { label: "Amount", num: true }, "Network", "Recipient", "Created", ACTIONS]}>
                  {ws.data.map((w) => (
                    <tr key={w.id}>
                      <td>
                        <a href={href("withdrawals", w.id)} aria-label={`Withdrawal ${w.id}`}>
                          <code>{shortId(w.id)}</code>
                        </a>
                      </td>
                      <td className="num">{formatCents(w.amountInCents)}</td>
                      <td>{chainLabel(chains, w.chainId)}</td>
                      <td>
                        <code className="wrap">{w.recipientAddress}</code>
                      </td>
                      <td>{formatDate(w.createdAt)}</td>
                      <td>
                        <ApprovalActions kind="withdrawal" id={w.id} approval={w.approval} status={w.status} guard={guard} onDone={done} />
                      </td>
                    </tr>
                  ))}
                </DataTable>
              )}
            </section>
            {rs ? (
              <section className="card" aria-labelledby="appr-r">
                <h2 id="appr-r">Refunds</h2>
                {rs.data.length === 0 ? (
                  <p className="muted">No refunds wait for an approval.</p>
                ) : (
                  <DataTable columns={["Refund", { label: "Amount", num: true }, "Network", "Recipient", "Created", ACTIONS]}>
                    {rs.data.map((r: Schemas["Refund"]) => (
                      <tr key={r.id}>
                        <td>
                          <a href={href("refunds", r.id)} aria-label={`Refund ${r.id}`}>
                            <code>{shortId(r.id)}</code>
                          </a>
                        </td>
                        <td className="num">
                          {refundAmount(r)}
                          <br />
                          <span className="muted">{formatCents(r.amountInCents)}</span>
                        </td>
                        <td>{chainLabel(chains, r.chainId)}</td>
                        <td>
                          <code className="wrap">{r.recipientAddress ?? "—"}</code>
                          {r.recipientSource && WHY[r.recipientSource] ? (
                            <>
                              <br />
                              <span className="muted">{WHY[r.recipientSource]}</span>
                            </>
                          ) : null}
                        </td>
                        <td>{formatDate(r.createdAt)}</td>
                        <td>
                          <ApprovalActions kind="refund" id={r.id} approval={r.approval} status={r.status} guard={guard} onDone={done} />
                        </td>
                      </tr>
                    ))}
                  </DataTable>
                )}
              </section>
            ) : null}
          </>
        )}
      </Loaded>
    </>
  );
}
