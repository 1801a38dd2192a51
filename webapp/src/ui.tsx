// Small shared pieces: loading a resource, showing an error, copy and confirm buttons.
// Merchant-supplied text is always rendered as React text children (escaped); nothing here
// (or anywhere in the app) uses dangerouslySetInnerHTML.
import { useCallback, useEffect, useId, useState, type DependencyList, type ReactNode } from "react";
import { api, unwrap, type Schemas } from "./api/client";

export type Load<T> = { status: "loading" } | { status: "error"; error: string } | { status: "ok"; data: T };

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  return "Something went wrong.";
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

// ConfirmButton asks once more before a destructive action.
export function ConfirmButton({
  label,
  confirmLabel,
  question,
  onConfirm,
  danger = true,
}: {
  label: string;
  confirmLabel: string;
  question: string;
  onConfirm: () => Promise<void>;
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!asking) {
    return (
      <button type="button" className={danger ? "button danger-outline" : "button secondary"} onClick={() => setAsking(true)}>
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
