import { useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { formatDate, shortId } from "../format";
import { useMerchant } from "../session";
import { ConfirmButton, ErrorMessage, errorText, Loaded, PageHeader, SecretOnce, StatusBadge, toggled, useLoad } from "../ui";

type EventType = Schemas["WebhookEventType"];
const EVENTS: EventType[] = [
  "payment.created",
  "payment.processing",
  "payment.completed",
  "payment.expired",
  "payment.failed",
  "payment.cancelled",
  "payment.underpaid",
  "payment.overpaid",
  "payment.late_transfer",
  "withdrawal.created",
  "withdrawal.processing",
  "withdrawal.completed",
  "withdrawal.failed",
  "withdrawal.cancelled",
];

// Settings → Developers → Webhooks: endpoints (create showing the signing secret once, delete,
// rotate the secret) and the delivery log with redelivery.
export function Webhooks() {
  const { merchantId, mode, can } = useMerchant();
  const writable = can("developers:write");
  const [endpoints, reload] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/webhooks", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  const [secret, setSecret] = useState<{ title: string; secret: string } | null>(null);
  const [filter, setFilter] = useState<string>("");

  return (
    <>
      <PageHeader title="Webhooks" />
      <p className="help">
        Events are signed (Standard Webhooks) with each endpoint's secret. New endpoints receive {mode}-mode events.
      </p>
      {secret ? <SecretOnce title={secret.title} secret={secret.secret} onDone={() => setSecret(null)} /> : null}
      {writable ? (
        <NewEndpoint
          merchantId={merchantId}
          onCreated={(r) => {
            setSecret({ title: "Signing secret of the new endpoint", secret: r.secret });
            reload();
          }}
        />
      ) : null}
      <section aria-labelledby="ep-h">
        <h2 id="ep-h">Endpoints</h2>
        <Loaded state={endpoints}>
          {(l) =>
            l.data.length === 0 ? (
              <p className="card muted">No endpoints yet.</p>
            ) : (
              <ul className="list">
                {l.data.map((ep) => (
                  <li key={ep.id} className="card">
                    <p className="ep-url">
                      <code className="wrap">{ep.url}</code>
                    </p>
                    <p>
                      <StatusBadge status={ep.enabled ? "enabled" : "disabled"} /> {ep.disabledReason ? <span>{ep.disabledReason}</span> : null}
                    </p>
                    <p className="help">
                      {ep.events.length === 0 ? "All events" : ep.events.join(", ")} · created {formatDate(ep.createdAt)}
                      {ep.secretRotationEndsAt ? ` · previous secret valid until ${formatDate(ep.secretRotationEndsAt)}` : ""}
                    </p>
                    <div className="row">
                      <button type="button" className="button secondary" aria-label={`Show deliveries of ${ep.url}`} onClick={() => setFilter(ep.id)}>
                        Show deliveries
                      </button>
                      {writable ? (
                        <>
                          <TestEvent merchantId={merchantId} endpointId={ep.id} url={ep.url} onSent={reload} />
                          <ConfirmButton
                            label="Rotate secret"
                            ariaLabel={`Rotate secret of ${ep.url}`}
                            confirmLabel="Rotate"
                            confirmAriaLabel={`Rotate the secret of ${ep.url}`}
                            danger={false}
                            question="Make a new secret? Deliveries carry both signatures for 24 hours."
                            onConfirm={async () => {
                              const r = await unwrap(
                                api.POST("/v1/merchants/{merchantId}/webhooks/{endpointId}/rotate-secret", {
                                  params: { path: { merchantId, endpointId: ep.id } },
                                }),
                              );
                              setSecret({ title: "New signing secret", secret: r.secret });
                              reload();
                            }}
                          />
                          <ConfirmButton
                            label="Delete"
                            ariaLabel={`Delete endpoint ${ep.url}`}
                            confirmLabel="Delete endpoint"
                            confirmAriaLabel={`Delete endpoint ${ep.url} now`}
                            question="Delete this endpoint? Nothing more is sent to it; its delivery log stays."
                            onConfirm={async () => {
                              await unwrap(
                                api.DELETE("/v1/merchants/{merchantId}/webhooks/{endpointId}", { params: { path: { merchantId, endpointId: ep.id } } }),
                              );
                              reload();
                            }}
                          />
                        </>
                      ) : null}
                    </div>
                  </li>
                ))}
              </ul>
            )
          }
        </Loaded>
      </section>
      <Deliveries merchantId={merchantId} mode={mode} endpointId={filter} onClear={() => setFilter("")} writable={writable} />
    </>
  );
}

function NewEndpoint({ merchantId, onCreated }: { merchantId: string; onCreated: (r: Schemas["WebhookEndpointWithSecret"]) => void }) {
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<Set<EventType>>(new Set());
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const urlId = useId();
  return (
    <details className="card">
      <summary>Add an endpoint</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          const body: Schemas["CreateWebhookEndpointRequest"] = { url: url.trim() };
          if (events.size > 0) body.events = EVENTS.filter((ev) => events.has(ev));
          unwrap(api.POST("/v1/merchants/{merchantId}/webhooks", { params: { path: { merchantId } }, body }))
            .then((r) => {
              setUrl("");
              setEvents(new Set());
              onCreated(r);
            })
            .catch((err: unknown) => setError(errorText(err)))
            .finally(() => setBusy(false));
        }}
      >
        <div className="field">
          <label htmlFor={urlId}>Endpoint URL</label>
          <input id={urlId} type="url" required placeholder="https://example.com/webhooks" value={url} onChange={(e) => setUrl(e.target.value)} />
        </div>
        <fieldset className="events">
          <legend>Events (none chosen: all events)</legend>
          {EVENTS.map((ev) => (
            <label key={ev} className="check">
              <input
                type="checkbox"
                checked={events.has(ev)}
                onChange={(e) => setEvents(toggled(events, ev, e.target.checked))}
              />
              {ev}
            </label>
          ))}
        </fieldset>
        <ErrorMessage error={error} />
        <button type="submit" className="button" disabled={busy}>
          {busy ? "Adding…" : "Add endpoint"}
        </button>
      </form>
    </details>
  );
}

function Deliveries({
  merchantId,
  mode,
  endpointId,
  onClear,
  writable,
}: {
  merchantId: string;
  mode: string;
  endpointId: string;
  onClear: () => void;
  writable: boolean;
}) {
  const [list, reload] = useLoad(
    (signal) =>
      unwrap(
        api.GET("/v1/merchants/{merchantId}/webhooks/deliveries", {
          params: { path: { merchantId }, query: { limit: 50, ...(endpointId ? { endpointId } : {}) } },
          signal,
        }),
      ),
    [merchantId, mode, endpointId],
  );
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-labelledby="dl-h">
      <div className="page-header">
        <h2 id="dl-h">Delivery log{endpointId ? ` — endpoint ${shortId(endpointId)}` : ""}</h2>
        <div className="page-actions">
          {endpointId ? (
            <button type="button" className="button secondary" onClick={onClear}>
              All endpoints
            </button>
          ) : null}
          <button type="button" className="button secondary" onClick={reload}>
            Refresh
          </button>
        </div>
      </div>
      {notice ? (
        <p className="notice" role="status">
          {notice}
        </p>
      ) : null}
      <ErrorMessage error={error} />
      <Loaded state={list}>
        {(l) =>
          l.data.length === 0 ? (
            <p className="card muted">No deliveries in the last 30 days.</p>
          ) : (
            <ul className="list">
              {l.data.map((d) => (
                <li key={d.id} className="card">
                  <div className="row spread">
                    <span>
                      <code>{d.eventId}</code> <StatusBadge status={d.status} />
                    </span>
                    <span className="help">
                      {d.attempts} attempt{d.attempts === 1 ? "" : "s"} · {formatDate(d.createdAt)}
                    </span>
                  </div>
                  {d.log.length > 0 ? (
                    <details>
                      <summary>Attempts</summary>
                      <ol className="attempts">
                        {d.log.map((a) => (
                          <li key={a.attempt}>
                            {formatDate(a.startedAt)} · {a.statusCode ?? "no answer"} · {a.latencyMs} ms
                            {a.error ? <> · {a.error}</> : null}
                            {a.response ? <pre className="response">{a.response}</pre> : null}
                          </li>
                        ))}
                      </ol>
                    </details>
                  ) : null}
                  {writable ? (
                    <button
                      type="button"
                      className="button secondary"
                      aria-label={`Redeliver event ${d.eventId}`}
                      onClick={() => {
                        setError(null);
                        setNotice(null);
                        unwrap(
                          api.POST("/v1/merchants/{merchantId}/webhooks/events/{eventId}/redeliver", {
                            params: { path: { merchantId, eventId: d.eventId }, query: { endpointId: d.endpointId } },
                          }),
                        ).then(
                          () => {
                            setNotice(`Event ${d.eventId} scheduled again.`);
                            reload();
                          },
                          (e: unknown) => setError(errorText(e)),
                        );
                      }}
                    >
                      Redeliver
                    </button>
                  ) : null}
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
    </section>
  );
}

// Send test event: a signed webhook.test event to one endpoint through the ordinary delivery
// path (POST …/webhooks/{endpointId}/test); its delivery shows in the log below.
function TestEvent({ merchantId, endpointId, url, onSent }: { merchantId: string; endpointId: string; url: string; onSent: () => void }) {
  const [state, setState] = useState<{ busy: boolean; note: string | null; error: string | null }>({ busy: false, note: null, error: null });
  return (
    <>
      <button
        type="button"
        className="button secondary"
        aria-label={`Send test event to ${url}`}
        disabled={state.busy}
        onClick={() => {
          setState({ busy: true, note: null, error: null });
          unwrap(api.POST("/v1/merchants/{merchantId}/webhooks/{endpointId}/test", { params: { path: { merchantId, endpointId } } })).then(
            (r) => {
              setState({ busy: false, note: `Test event ${r.eventId} queued.`, error: null });
              onSent();
            },
            (e: unknown) => setState({ busy: false, note: null, error: errorText(e) }),
          );
        }}
      >
        Send test event
      </button>
      {state.note ? (
        <span role="status" className="notice">
          {state.note}
        </span>
      ) : null}
      <ErrorMessage error={state.error} />
    </>
  );
}
