// Small shared pieces: loading a resource, showing an error, copy and confirm buttons.
// Merchant-supplied text is always rendered as React text children (escaped); nothing here
// (or anywhere in the app) uses dangerouslySetInnerHTML.
import { useCallback, useEffect, useId, useRef, useState, type DependencyList, type ReactNode } from "react";
import { authErrorText } from "./api/auth";
import { api, unwrap, type Schemas } from "./api/client";
import { href } from "./router";

export type Load<T> = { status: "loading" } | { status: "error"; error: string } | { status: "ok"; data: T };

// errorText: the API's error message, or a plainer one for the codes a person can act on.
export function errorText(e: unknown): string {
  return authErrorText(e);
}

// useLoad runs load when deps change (and on reload()), dropping answers of superseded runs.
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): [Load<T>, () => void] {
  const [state, setState] = useState<Load<T>>({ status: "loading" });
  const [n, setN] = useState(0);
  useEffect(() => {
    const ac = new AbortController();
    load(ac.signal).then(
      (data) => {
        if (!ac.signal.aborted) setState({ status: "ok", data });
      },
      (e: unknown) => {
        if (!ac.signal.aborted) setState({ status: "error", error: errorText(e) });
      },
    );
    return () => ac.abort();
    // deps are the caller's: load is a new closure each render
  }, [...deps, n]);
  const reload = useCallback(() => setN((x) => x + 1), []);
  return [state, reload];
}

export function Loaded<T>({ state, children }: { state: Load<T>; children: (data: T) => ReactNode }) {
  if (state.status === "loading") return <p className="muted" role="status">Loading…</p>;
  if (state.status === "error") return <ErrorMessage error={state.error} />;
  return <>{children(state.data)}</>;
}

export function ErrorMessage({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children ? <div className="page-actions">{children}</div> : null}
    </div>
  );
}

// BackLink: a page's link back to its list (#/<page>).
export function BackLink({ page, label }: { page: string; label: string }) {
  return (
    <p>
      <a href={href(page)}>{`← ${label}`}</a>
    </p>
  );
}

export function Placeholder({ title, coming, children }: { title: string; coming: string; children?: ReactNode }) {
  return (
    <>
      <PageHeader title={title} />
      <div className="card placeholder">
        <p>
          <strong>{coming}</strong>
        </p>
        {children}
      </div>
    </>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <button
      type="button"
      className="button secondary"
      onClick={() => {
        navigator.clipboard.writeText(text).then(
          () => setDone("copied"),
          () => setDone("failed"),
        );
      }}
    >
      {done === "copied" ? "Copied" : done === "failed" ? "Copy failed — select the text" : label}
    </button>
  );
}

// A secret shown once (a new secret key, a webhook signing secret).
export function SecretOnce({ title, secret, onDone }: { title: string; secret: string; onDone: () => void }) {
  const id = useId();
  return (
    <div className="card secret" role="region" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <p>Copy it now: it is shown only once and cannot be read again.</p>
      <p className="secret-value">
        <code>{secret}</code>
      </p>
      <div className="row">
        <CopyButton text={secret} />
        <button type="button" className="button" onClick={onDone}>
          I have saved it
        </button>
      </div>
    </div>
  );
}

// A heading that takes the focus when it appears (a step of a form replacing the previous
// one), so keyboard and screen-reader users land on it.
export function FocusedHeading({ id, level = 2, children }: { id: string; level?: 2 | 3; children: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const H = level === 3 ? "h3" : "h2";
  return (
    <H id={id} ref={ref} tabIndex={-1}>
      {children}
    </H>
  );
}

// useSubmit: a form's busy flag and error. submit(action, done) turns busy on and clears the
// error, then calls done with the answer (which moves on: busy stays on) or shows the error.
export function useSubmit(): {
  busy: boolean;
  error: string | null;
  setError: (error: string | null) => void;
  submit: <T>(action: () => Promise<T>, done: (answer: T) => void) => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = <T,>(action: () => Promise<T>, done: (answer: T) => void) => {
    setBusy(true);
    setError(null);
    action().then(done, (err: unknown) => {
      setBusy(false);
      setError(errorText(err));
    });
  };
  return { busy, error, setError, submit };
}

// ReviewActions: a review step's step-up prompt, error, confirm button (busyLabel while it runs)
// and Edit (back to the form).
export function ReviewActions({
  prompt,
  error,
  busy,
  label,
  busyLabel,
  onConfirm,
  onEdit,
}: {
  prompt: ReactNode;
  error: string | null;
  busy: boolean;
  label: string;
  busyLabel: string;
  onConfirm: () => void;
  onEdit: () => void;
}) {
  return (
    <>
      {prompt}
      <ErrorMessage error={error} />
      <div className="row">
        <button type="button" className="button" disabled={busy} onClick={onConfirm}>
          {busy ? busyLabel : label}
        </button>
        <button type="button" className="button secondary" disabled={busy} onClick={onEdit}>
          Edit
        </button>
      </div>
    </>
  );
}

// ConfirmButton asks once more before a destructive action.
export function ConfirmButton({
  label,
  confirmLabel,
  question,
  onConfirm,
  danger = true,
  ariaLabel,
  confirmAriaLabel,
}: {
  label: string;
  confirmLabel: string;
  // Accessible names naming the row (label-in-name: each starts with its visible text).
  ariaLabel?: string;
  confirmAriaLabel?: string;
  question: string;
  onConfirm: () => Promise<void>;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!asking) {
    return (
      <button type="button" className={danger ? "button danger-outline" : "button secondary"} aria-label={ariaLabel} onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        className={danger ? "button danger" : "button"}
        aria-label={confirmAriaLabel}
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setError(null);
          onConfirm().then(
            () => {
              setBusy(false);
              setAsking(false);
            },
            (e: unknown) => {
              setBusy(false);
              setError(errorText(e));
            },
          );
        }}
      >
        {busy ? "Working…" : confirmLabel}
      </button>
      <button type="button" className="button secondary" disabled={busy} onClick={() => setAsking(false)}>
        Keep
      </button>
      <ErrorMessage error={error} />
    </span>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status-${status}`}>{status.replace(/_/g, " ")}</span>;
}

// Chain names from the public chain list (GET /v1/external/chains), for showing "Base" rather
// than "eip155:8453". An id the list lacks is shown as is.
export type ChainNames = ReadonlyMap<string, Schemas["Chain"]>;

let chainCache: Promise<ChainNames> | null = null;

export function loadChains(): Promise<ChainNames> {
  chainCache ??= unwrap(api.GET("/v1/external/chains", { params: { query: { limit: 1000 } } })).then(
    (list) => new Map(list.data.map((c) => [c.chainId, c])),
    (e: unknown) => {
      chainCache = null;
      throw e;
    },
  );
  return chainCache;
}

export function useChains(): ChainNames {
  const [names, setNames] = useState<ChainNames>(new Map());
  useEffect(() => {
    let live = true;
    loadChains().then(
      (m) => {
        if (live) setNames(m);
      },
      () => undefined, // names are a nicety: ids are shown instead
    );
    return () => {
      live = false;
    };
  }, []);
  return names;
}

export function chainLabel(names: ChainNames, chainId: string): string {
  const c = names.get(chainId);
  if (!c) return chainId;
  return c.isTestnet ? `${c.name} (testnet)` : c.name;
}

// useLive is useLoad that also reloads every `ms` while the page is visible
// (document.visibilityState), keeping the shown data between reloads, and stops while hidden —
// so a change shows within a few seconds without a reload and a background tab costs nothing.
export function useLive<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList, ms = 2500): Load<T> {
  return useLiveReload(load, deps, ms)[0];
}

// useLiveReload is useLive with a reload() that polls at once (after an action changed the data),
// keeping what is shown until the answer arrives — no "Loading…" in between, so rows that stay
// keep their elements (and the focus).
export function useLiveReload<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList, ms = 2500): [Load<T>, () => void] {
  const [state, setState] = useState<Load<T>>({ status: "loading" });
  const kick = useRef<() => void>(() => undefined);
  useEffect(() => {
    setState({ status: "loading" });
    let ac: AbortController | null = null;
    let timer: number | undefined;
    let stopped = false;
    const run = () => {
      ac?.abort();
      const mine = new AbortController();
      ac = mine;
      load(mine.signal).then(
        (data) => {
          if (!mine.signal.aborted) setState({ status: "ok", data });
        },
        (e: unknown) => {
          // a failed poll keeps the data shown; only a first load shows the error
          if (!mine.signal.aborted) setState((old) => (old.status === "ok" ? old : { status: "error", error: errorText(e) }));
        },
      );
    };
    const schedule = () => {
      window.clearTimeout(timer);
      if (stopped || document.visibilityState !== "visible") return;
      timer = window.setTimeout(() => {
        run();
        schedule();
      }, ms);
    };
    const onVis = () => {
      if (document.visibilityState === "visible") {
        run();
        schedule();
      } else {
        window.clearTimeout(timer);
      }
    };
    run();
    schedule();
    kick.current = () => {
      run();
      schedule();
    };
    document.addEventListener("visibilitychange", onVis);
    return () => {
      kick.current = () => undefined;
      stopped = true;
      window.clearTimeout(timer);
      ac?.abort();
      document.removeEventListener("visibilitychange", onVis);
    };
    // deps are the caller's: load is a new closure each render
  }, deps);
  const reload = useCallback(() => kick.current(), []);
  return [state, reload];
}

// safeHref lets only http(s) URLs become links (merchant- or chain-supplied URLs).
export function safeHref(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}

// ExportCsv downloads a CSV export: fetched with the bearer token (never in a URL) into a Blob,
// saved through an object URL.
export function ExportCsv({ what, fetchCsv }: { what: string; fetchCsv: (from: string, to: string) => Promise<Blob> }) {
  const today = new Date().toISOString().slice(0, 10);
  const monthAgo = new Date(Date.now() - 30 * 86_400_000).toISOString().slice(0, 10);
  const [from, setFrom] = useState(monthAgo);
  const [to, setTo] = useState(today);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  return (
    <form
      className="card filters"
      aria-labelledby={`${id}-h`}
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        // The To day is included: the API's `to` is exclusive, so ask up to the next day (UTC).
        const end = new Date(`${to}T00:00:00Z`);
        end.setUTCDate(end.getUTCDate() + 1);
        fetchCsv(from, end.toISOString().slice(0, 10))
          .then((blob) => {
            const url = URL.createObjectURL(blob);
            const a = document.createElement("a");
            a.href = url;
            a.download = `${what}-${from}-to-${to}.csv`;
            document.body.appendChild(a);
            a.click();
            a.remove();
            window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
          })
          .catch((err: unknown) => setError(errorText(err)))
          .finally(() => setBusy(false));
      }}
    >
      <h2 id={`${id}-h`} className="small-heading">
        Export
      </h2>
      <div className="field inline">
        <label htmlFor={`${id}-f`}>From</label>
        <input id={`${id}-f`} type="date" required value={from} onChange={(e) => setFrom(e.target.value)} />
      </div>
      <div className="field inline">
        <label htmlFor={`${id}-t`}>To</label>
        <input id={`${id}-t`} type="date" required value={to} onChange={(e) => setTo(e.target.value)} />
      </div>
      <button type="submit" className="button secondary" disabled={busy}>
        {busy ? "Exporting…" : "Export CSV"}
      </button>
      <ErrorMessage error={error} />
    </form>
  );
}

// useSettings loads a settings resource for its form. The form calls onSaved after a save: the
// resource is loaded again and saved turns true (SavedNotice shows it).
export function useSettings<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): [Load<T>, boolean, () => void] {
  const [state, reload] = useLoad(load, deps);
  const [saved, setSaved] = useState(false);
  const onSaved = () => {
    setSaved(true);
    reload();
  };
  return [state, saved, onSaved];
}

export function SavedNotice({ saved }: { saved: boolean }) {
  return saved ? (
    <p className="notice" role="status">
      Saved.
    </p>
  ) : null;
}

// toggled: a copy of a set of checked items with one item checked or not.
export function toggled<T>(set: ReadonlySet<T>, item: T, checked: boolean): Set<T> {
  const next = new Set(set);
  if (checked) next.add(item);
  else next.delete(item);
  return next;
}

// A table column's header: its name, or the name and how it shows (num: right-aligned, for
// amounts; hidden: read by screen readers only). A false or null column is left out.
export type Column = string | { label: string; num?: boolean; hidden?: boolean } | false | null;

// ACTIONS heads a column of row buttons: named for screen readers, blank on screen.
export const ACTIONS: Column = { label: "Actions", hidden: true };

// DataTable: a scrollable table with one header row, its rows as children.
export function DataTable({ columns, className = "table-wrap", children }: { columns: Column[]; className?: string; children: ReactNode }) {
  return (
    <div className={className}>
      <table>
        <thead>
          <tr>
            {columns.map((c) => {
              if (!c) return null;
              const col = typeof c === "string" ? { label: c } : c;
              return (
                <th key={col.label} scope="col" className={col.num ? "num" : undefined}>
                  {col.hidden ? <span className="visually-hidden">{col.label}</span> : col.label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

// TableSection: a card with a heading and a table of items (a row each), or `empty` when there
// are none; children follow the table.
export function TableSection<T>({
  id,
  title,
  columns,
  items,
  empty,
  row,
  children,
}: {
  id: string;
  title: string;
  columns: Column[];
  items: readonly T[];
  empty: string;
  row: (item: T) => ReactNode;
  children?: ReactNode;
}) {
  return (
    <section className="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {items.length === 0 ? <p className="muted">{empty}</p> : <DataTable columns={columns}>{items.map((x) => row(x))}</DataTable>}
      {children}
    </section>
  );
}

// PagedTable: a list page's table in a card and its pager, offset paging `page` rows at a time.
export function PagedTable({
  columns,
  pagination,
  offset,
  page,
  onOffset,
  children,
}: {
  columns: Column[];
  pagination: Schemas["Pagination"];
  offset: number;
  page: number;
  onOffset: (offset: number) => void;
  children: ReactNode;
}) {
  return (
    <>
      <DataTable columns={columns} className="table-wrap card">
        {children}
      </DataTable>
      <nav className="pager" aria-label="Pages">
        <button type="button" className="button secondary" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - page))}>
          Previous page
        </button>
        <span>
          Page {pagination.currentPage} of {Math.max(1, pagination.totalPages)}
        </span>
        <button type="button" className="button secondary" disabled={!pagination.hasMore} onClick={() => onOffset(offset + page)}>
          Next page
        </button>
      </nav>
    </>
  );
}
