import { useEffect, useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { formatDate } from "../format";
import { useMerchant } from "../session";
import { ErrorMessage, errorText, PageHeader } from "../ui";

type Entry = Schemas["AuditEntry"];

// The actions the API documents (AuditEntry.action); the filter also takes any other text.
const ACTIONS = [
  "api_key.created",
  "api_key.revoked",
  "webhook_endpoint.created",
  "webhook_endpoint.deleted",
  "webhook_endpoint.secret_rotated",
  "withdrawal.created",
  "withdrawal.cancelled",
  "settings.withdrawal_config_updated",
  "settings.withdrawals_enabled_changed",
  "settings.accepted_assets_updated",
  "member.role_changed",
  "member.removed",
  "invitation.created",
  "invitation.revoked",
];

// A date field's value (YYYY-MM-DD, the person's local day) as the start of that day.
function dayStart(d: string): string | undefined {
  if (d === "") return undefined;
  const t = new Date(`${d}T00:00:00`);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

function dayAfter(d: string): string | undefined {
  const s = dayStart(d);
  if (!s) return undefined;
  const t = new Date(s);
  t.setDate(t.getDate() + 1);
  return t.toISOString();
}

function details(d: Entry["details"]): string {
  const keys = Object.keys(d);
  if (keys.length === 0) return "—";
  return keys.map((k) => `${k}: ${typeof d[k] === "string" ? (d[k] as string) : JSON.stringify(d[k])}`).join("; ");
}

export function AuditLog() {
  const { merchantId } = useMerchant();
  const [action, setAction] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [applied, setApplied] = useState({ action: "", from: "", to: "" });
  const [items, setItems] = useState<Entry[]>([]);
  const [next, setNext] = useState<number | null>(null);
  const [busy, setBusy] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const id = useId();

  function load(before: number | null) {
    setBusy(true);
    setError(null);
    const f = dayStart(applied.from);
    const t = dayAfter(applied.to);
    unwrap(
      api.GET("/v1/merchants/{merchantId}/audit-log", {
        params: {
          path: { merchantId },
          query: {
            limit: 50,
            ...(applied.action ? { action: applied.action } : {}),
            ...(f ? { from: f } : {}),
            ...(t ? { to: t } : {}),
            ...(before !== null ? { before } : {}),
          },
        },
      }),
    )
      .then((p) => {
        setItems((old) => (before === null ? p.items : [...old, ...p.items]));
        setNext(p.nextBefore);
      })
      .catch((e: unknown) => setError(errorText(e)))
      .finally(() => setBusy(false));
  }

  useEffect(() => {
    setItems([]);
    load(null);
    // load reads the applied filters
  }, [merchantId, applied]);

  return (
    <>
      <PageHeader title="Audit log" />
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied({ action: action.trim(), from, to });
        }}
      >
        <div className="field inline">
          <label htmlFor={`${id}-a`}>Action</label>
          <input id={`${id}-a`} list={`${id}-al`} value={action} onChange={(e) => setAction(e.target.value)} />
          <datalist id={`${id}-al`}>
            {ACTIONS.map((a) => (
              <option key={a} value={a} />
            ))}
          </datalist>
        </div>
        <div className="field inline">
          <label htmlFor={`${id}-f`}>From</label>
          <input id={`${id}-f`} type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div className="field inline">
          <label htmlFor={`${id}-t`}>To</label>
          <input id={`${id}-t`} type="date" value={to} onChange={(e) => setTo(e.target.value)} />
        </div>
        <button type="submit" className="button secondary">
          Filter
        </button>
      </form>
      <ErrorMessage error={error} />
      {items.length === 0 && !busy ? (
        <p className="card muted">No entries.</p>
      ) : (
        <div className="table-wrap card">
          <table>
            <caption className="visually-hidden">Audit log, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">From where</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {items.map((e) => (
                <tr key={e.id}>
                  <td>{formatDate(e.at)}</td>
                  <td>
                    {e.actor.label || e.actor.id} <span className="muted">({e.actor.kind})</span>
                  </td>
                  <td>{e.actor.ip || "—"}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>
                    {e.targetType} <code className="wrap">{e.targetId}</code>
                  </td>
                  <td className="wrap">{details(e.details)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {busy ? (
        <p className="muted" role="status">
          Loading…
        </p>
      ) : null}
      {next !== null && !busy ? (
        <button type="button" className="button secondary" onClick={() => load(next)}>
          Load more
        </button>
      ) : null}
    </>
  );
}
