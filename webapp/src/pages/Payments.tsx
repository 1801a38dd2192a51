import { useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { formatCents, formatDate, shortId } from "../format";
import { href } from "../router";
import { useMerchant } from "../session";
import { PaymentRefunds } from "./PaymentRefunds";
import { PagedList, StatusFilter, useListFilters } from "../lists";
import { BackLink, chainLabel, ExportCsv, Loaded, PageHeader, safeHref, StatusBadge, TableSection, useChains, useLive } from "../ui";

type Status = Schemas["PaymentStatus"];
const STATUSES: Status[] = ["pending", "processing", "completed", "failed", "expired", "cancelled"];
const PAGE = 25;

function paymentName(p: { id: string; orderId: string | null }): string {
  return p.orderId ? p.orderId : p.id;
}

// Payments: the team's payments (GET …/payments), live — polled every 2.5 s while the page is
// visible, so a new payment or a status change shows without a reload.
export function PaymentList() {
  const { merchantId, mode } = useMerchant();
  const [status, setStatus] = useState<Status | "">("");
  const [search, setSearch] = useState("");
  const { filters: applied, applyFilters, offset, setOffset } = useListFilters<{ status: Status | ""; search: string }>({ status: "", search: "" });
  const id = useId();
  const list = useLive(
    (signal) =>
      unwrap(
        api.GET("/v1/merchants/{merchantId}/payments", {
          params: {
            path: { merchantId },
            query: {
              limit: PAGE,
              offset,
              sortBy: "createdAt",
              sortOrder: "DESC",
              ...(applied.status ? { status: applied.status } : {}),
              ...(applied.search ? { search: applied.search } : {}),
            },
          },
          signal,
        }),
      ),
    [merchantId, mode, applied, offset],
  );
  return (
    <>
      <PageHeader title="Payments" />
      <form
        className="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          applyFilters({ status, search: search.trim() });
        }}
      >
        <StatusFilter id={`${id}-s`} statuses={STATUSES} value={status} onChange={setStatus} />
        <div className="field inline">
          <label htmlFor={`${id}-q`}>Search</label>
          <input id={`${id}-q`} type="search" placeholder="Order id or payment id" value={search} onChange={(e) => setSearch(e.target.value)} />
        </div>
        <button type="submit" className="button secondary">
          Search
        </button>
      </form>
      <PagedList
        state={list}
        columns={["Payment", { label: "Amount", num: true }, "Status", "Created"]}
        page={PAGE}
        offset={offset}
        onOffset={setOffset}
        empty={`No payments${applied.status || applied.search ? " match" : ""} in ${mode} mode.`}
        row={(p) => (
          <tr key={p.id}>
            <td>
              <a href={href("payments", p.id)} aria-label={`Payment ${paymentName(p)}`}>
                {p.orderId ? <span className="wrap">{p.orderId}</span> : <code>{shortId(p.id)}</code>}
              </a>
            </td>
            <td className="num">{formatCents(p.amountInCents)}</td>
            <td>
              <StatusBadge status={p.status} />
            </td>
            <td>{formatDate(p.createdAt)}</td>
          </tr>
        )}
      />
      <ExportCsv
        what="payments"
        fetchCsv={(from, to) =>
          unwrap(api.GET("/v1/merchants/{merchantId}/exports/payments.csv", { params: { path: { merchantId }, query: { from, to } }, parseAs: "blob" }))
        }
      />
    </>
  );
}

export function PaymentDetail({ id }: { id: string }) {
  const { merchantId, mode } = useMerchant();
  const chains = useChains();
  const path = { merchantId, paymentId: id };
  const data = useLive(
    (signal) =>
      Promise.all([
        unwrap(api.GET("/v1/merchants/{merchantId}/payments/{paymentId}", { params: { path }, signal })),
        unwrap(api.GET("/v1/merchants/{merchantId}/payments/{paymentId}/events", { params: { path }, signal })),
        unwrap(api.GET("/v1/merchants/{merchantId}/payments/{paymentId}/transfers", { params: { path }, signal })),
        unwrap(api.GET("/v1/merchants/{merchantId}/payments/{paymentId}/deliveries", { params: { path }, signal })),
      ]),
    [merchantId, mode, id],
  );
  return (
    <>
      <BackLink page="payments" label="Payments" />
      <Loaded state={data}>
        {([p, events, transfers, deliveries]) => (
          <>
            <PageHeader title={`Payment ${paymentName(p)}`} />
            <section className="card" aria-labelledby="pay-sum">
              <h2 id="pay-sum">Summary</h2>
              <dl className="facts">
                <dt>Status</dt>
                <dd>
                  <span role="status">
                    <StatusBadge status={p.status} />
                  </span>
                </dd>
                <dt>Payment id</dt>
                <dd>
                  <code className="wrap">{p.id}</code>
                </dd>
                <dt>Order id</dt>
                <dd className="wrap">{p.orderId ?? "—"}</dd>
                <dt>Type</dt>
                <dd>{p.type}</dd>
                <dt>Amount</dt>
                <dd>{formatCents(p.amountInCents)}</dd>
                <dt>Due from the customer</dt>
                <dd>{formatCents(p.amountDueCents)}</dd>
                <dt>Fees</dt>
                <dd>
                  merchant {formatCents(p.merchantFeeCents ?? 0)}, convenience {formatCents(p.convenienceFeeCents ?? 0)}, swap{" "}
                  {formatCents(p.swapFeeCents ?? 0)}
                </dd>
                <dt>Net to you</dt>
                <dd>{formatCents(p.amountMerchantNetCents)}</dd>
                {p.amountRefundedCents ? (
                  <>
                    <dt>Refunded</dt>
                    <dd>{formatCents(p.amountRefundedCents)}</dd>
                  </>
                ) : null}
                {p.received ? (
                  <>
                    <dt>Received (smallest unit)</dt>
                    <dd>
                      {p.received.amountAsset} ({p.received.confirmedAmountAsset} confirmed, {p.received.remainingAmountAsset} still due)
                    </dd>
                  </>
                ) : null}
                <dt>Created</dt>
                <dd>{formatDate(p.createdAt)}</dd>
              </dl>
            </section>

            <TableSection
              id="pay-quotes"
              title="Quotes"
              columns={["Token", "Network", "Expected (smallest unit)", "Rate (USD)", "Status", "Expires"]}
              items={p.quotes}
              empty="No quotes."
              row={(q) => (
                <tr key={q.id}>
                  <td>{q.token.symbol}</td>
                  <td>{chainLabel(chains, q.chainId)}</td>
                  <td className="wrap">{q.expectedAmountAsset}</td>
                  <td>{q.rateUsdAsset}</td>
                  <td>
                    <StatusBadge status={q.status} />
                  </td>
                  <td>{formatDate(q.expiresAt)}</td>
                </tr>
              )}
            />

            <TableSection
              id="pay-transfers"
              title="On-chain transfers"
              columns={["Transaction", "Network", "Amount", "Confirmations", "Status"]}
              items={transfers.data}
              empty="No transfers seen yet."
              row={(t) => {
                const link = safeHref(t.explorerUrl);
                return (
                  <tr key={t.id}>
                    <td>
                      {link ? (
                        <a href={link} target="_blank" rel="noopener noreferrer" aria-label={`Transaction ${t.txHash} (opens in a new tab)`}>
                          <code>{shortId(t.txHash)}</code>
                        </a>
                      ) : (
                        <code className="wrap">{t.txHash}</code>
                      )}
                    </td>
                    <td>{chainLabel(chains, t.chainId)}</td>
                    <td>
                      {t.amount} {t.tokenSymbol}
                    </td>
                    <td>
                      {t.confirmations} / {t.requiredConfirmations}
                    </td>
                    <td>
                      <StatusBadge status={t.status} />
                      {t.credited ? " credited" : ""}
                    </td>
                  </tr>
                );
              }}
            />

            {p.receipt ? (
              <section className="card" aria-labelledby="pay-receipt">
                <h2 id="pay-receipt">Receipt</h2>
                <dl className="facts">
                  <dt>Settled</dt>
                  <dd>
                    ${p.receipt.settledAmountUsd} in {p.receipt.settledToken.symbol} on {p.receipt.settledChain.name}
                  </dd>
                  <dt>Transaction</dt>
                  <dd>
                    <code className="wrap">{p.receipt.txHash ?? "—"}</code>
                  </dd>
                  <dt>Block</dt>
                  <dd>{p.receipt.txBlockNumber ?? "—"}</dd>
                  <dt>From</dt>
                  <dd>
                    <code className="wrap">{p.receipt.txSenderAddress ?? "—"}</code>
                  </dd>
                  <dt>At</dt>
                  <dd>{formatDate(p.receipt.txTimestamp)}</dd>
                </dl>
              </section>
            ) : null}

            <PaymentRefunds p={p} />

            <section className="card" aria-labelledby="pay-events">
              <h2 id="pay-events">Timeline</h2>
              {events.data.length === 0 ? (
                <p className="muted">No events yet.</p>
              ) : (
                <ol className="timeline">
                  {events.data.map((ev) => (
                    <li key={ev.id}>
                      <time dateTime={ev.at}>{formatDate(ev.at)}</time> — <code>{ev.type}</code>: {ev.data.status}
                      {ev.data.txHash ? (
                        <>
                          {" "}
                          (transaction <code className="wrap">{ev.data.txHash}</code>)
                        </>
                      ) : null}
                    </li>
                  ))}
                </ol>
              )}
            </section>

            <TableSection
              id="pay-deliveries"
              title="Webhook deliveries"
              columns={["Event", "Status", "Attempts", "Last answer", "Updated"]}
              items={deliveries.data}
              empty="No webhook deliveries for this payment."
              row={(d) => {
                const last = d.log[d.log.length - 1];
                return (
                  <tr key={d.id}>
                    <td>
                      <code className="wrap">{d.eventId}</code>
                    </td>
                    <td>
                      <StatusBadge status={d.status} />
                    </td>
                    <td>{d.attempts}</td>
                    <td>{last ? (last.statusCode !== null ? `HTTP ${last.statusCode}` : (last.error ?? "no answer")) : "—"}</td>
                    <td>{formatDate(d.updatedAt)}</td>
                  </tr>
                );
              }}
            />
          </>
        )}
      </Loaded>
    </>
  );
}
