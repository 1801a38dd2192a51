import { api, unwrap } from "../api/client";
import { formatCents } from "../format";
import { href } from "../router";
import { useMerchant } from "../session";
import { chainLabel, Loaded, PageHeader, useChains, useLoad } from "../ui";

// Overview: the balance (GET /v1/merchants/{merchantId}/balance) for now. The payments
// summary and 30-day volume come with GET …/overview (data helper, issue 22).
export function Overview() {
  const { merchantId, mode, can } = useMerchant();
  const chains = useChains();
  const [balance] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/balance", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  return (
    <>
      <PageHeader title="Overview">
        {can("withdrawals:write") ? (
          <a className="button" href={href("withdrawals", "new")}>
            New withdrawal
          </a>
        ) : null}
      </PageHeader>
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
                <div className="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Network</th>
                        <th scope="col">Token</th>
                        <th scope="col" className="num">
                          Amount
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {b.pendingPayouts.map((p) => (
                        <tr key={`${p.chainId}/${p.tokenSymbol}`}>
                          <td>{chainLabel(chains, p.chainId)}</td>
                          <td>{p.tokenSymbol}</td>
                          <td className="num">{formatCents(p.amountInCents)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </section>
            ) : null}
          </>
        )}
      </Loaded>
      <section className="card placeholder" aria-labelledby="ov-more">
        <h2 id="ov-more">Payments and volume</h2>
        <p>Coming with the payments API: payments by status and the last 30 days' volume will be shown here.</p>
      </section>
    </>
  );
}
