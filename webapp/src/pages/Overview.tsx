import { api, unwrap } from "../api/client";
import { formatCents } from "../format";
import { href } from "../router";
import { useMerchant } from "../session";
import { chainLabel, DataTable, Loaded, StatusBadge, TableSection, useChains, useLive, useLoad } from "../ui";
import { VolumeChart } from "./VolumeChart";
import { NewWithdrawalHeader } from "./Withdrawals";

// Overview: the balance (GET …/balance), and from GET …/overview what payments brought in per
// token, payments by status and the last 30 days' volume as a chart.
export function Overview() {
  const { merchantId, mode, can } = useMerchant();
  const chains = useChains();
  const [balance] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/balance", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  return (
    <>
      <NewWithdrawalHeader title="Overview" />
      <Loaded state={balance}>
        {(b) => (
          <>
            <section className="stats" aria-label="Balance">
              <div className="card stat">
                <h2>Available ({b.mode})</h2>
                <p className="stat-value">{formatCents(b.availableInCents)}</p>
                <p className="help">What can be withdrawn now.</p>
              </div>
              <div className="card stat">
                <h2>Pending withdrawals</h2>
                <p className="stat-value">{formatCents(b.pendingPayoutsInCents)}</p>
                <p className="help">Debited, not yet paid out.</p>
              </div>
              <div className="card stat">
                <h2>{b.mode === "live" ? "Test" : "Live"} mode available</h2>
                <p className="stat-value">{formatCents(b.mode === "live" ? b.modes.test.availableInCents : b.modes.live.availableInCents)}</p>
                <p className="help">The other mode's balance, for reference.</p>
              </div>
            </section>
            {b.pendingPayouts.length > 0 ? (
              <section className="card" aria-labelledby="pending-h">
                <h2 id="pending-h">Pending by network</h2>
                <DataTable columns={["Network", "Token", { label: "Amount", num: true }]}>
                  {b.pendingPayouts.map((p) => (
                    <tr key={`${p.chainId}/${p.tokenSymbol}`}>
                      <td>{chainLabel(chains, p.chainId)}</td>
                      <td>{p.tokenSymbol}</td>
                      <td className="num">{formatCents(p.amountInCents)}</td>
                    </tr>
                  ))}
                </DataTable>
              </section>
            ) : null}
          </>
        )}
      </Loaded>
      {can("payments:read") ? <PaymentsSummary /> : null}
    </>
  );
}

function PaymentsSummary() {
  const { merchantId, mode } = useMerchant();
  const chains = useChains();
  const ov = useLive(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/overview", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
    10_000,
  );
  return (
    <Loaded state={ov}>
      {(o) => (
        <>
          <TableSection
            id="ov-tokens"
            title="Received per token"
            columns={["Token", "Network", { label: "Received (USD)", num: true }, { label: "Payments", num: true }]}
            items={o.balancesByToken}
            empty="No completed payments yet."
            row={(b) => (
              <tr key={b.tokenId}>
                <td>{b.tokenSymbol}</td>
                <td>{chainLabel(chains, b.chainId)}</td>
                <td className="num">{formatCents(b.receivedInCents)}</td>
                <td className="num">{b.payments}</td>
              </tr>
            )}
          >
            <p className="help">What completed payments brought in since the start; the available balance above is what can be withdrawn.</p>
          </TableSection>
          <section className="card" aria-labelledby="ov-status">
            <h2 id="ov-status">Payments by status</h2>
            <ul className="status-counts">
              {Object.entries(o.paymentsByStatus).map(([st, n]) => (
                <li key={st}>
                  <a href={href("payments")}>
                    <StatusBadge status={st} /> <strong>{n}</strong>
                  </a>
                </li>
              ))}
            </ul>
          </section>
          <section className="card" aria-labelledby="ov-volume">
            <h2 id="ov-volume">Volume, last 30 days</h2>
            <VolumeChart days={o.volume30d} />
          </section>
        </>
      )}
    </Loaded>
  );
}
