// Step-up: an operation marked `x-second-factor: recent` (a new secret key, a withdrawal)
// answers 403 when the session's second factor is not recent. guard() then asks for an
// authentication code inline, exchanges it (POST /v1/auth/step-up) for a fresh token, and runs
// the action again — with the same Idempotency-Key, so it still happens once.
import { useId, useState, type ReactNode } from "react";
import { STEP_UP_CODES } from "./api/auth";
import { ApiError } from "./api/client";
import { useSession } from "./session";
import { ErrorMessage, errorText } from "./ui";

export function needsStepUp(e: unknown): boolean {
  return e instanceof ApiError && e.status === 403 && STEP_UP_CODES.has(e.code);
}

interface Pending {
  retry: () => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export function useStepUp(): { guard: <T>(action: () => Promise<T>) => Promise<T>; prompt: ReactNode } {
  const session = useSession();
  const [pending, setPending] = useState<Pending | null>(null);
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();

  const guard = <T,>(action: () => Promise<T>): Promise<T> =>
    action().catch((e: unknown) => {
      if (!needsStepUp(e)) throw e;
      return new Promise<T>((resolve, reject) => {
        setCode("");
        setError(null);
        setPending({ retry: action, resolve: resolve as (v: unknown) => void, reject });
      });
    });

  const prompt = pending ? (
    <form
      className="card secret"
      aria-labelledby={`${id}-h`}
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        session
          .stepUp(code.trim())
          .then(() => pending.retry())
          .then(
            (v) => {
              setPending(null);
              pending.resolve(v);
            },
            (err: unknown) => setError(errorText(err)),
          )
          .finally(() => setBusy(false));
      }}
    >
      <h2 id={`${id}-h`}>Confirm it is you</h2>
      <div className="field">
        <label htmlFor={id}>Authentication code</label>
        <input id={id} inputMode="numeric" autoComplete="one-time-code" required autoFocus value={code} onChange={(e) => setCode(e.target.value)} />
      </div>
      <ErrorMessage error={error} />
      <div className="row">
        <button type="submit" className="button" disabled={busy}>
          {busy ? "Confirming…" : "Confirm"}
        </button>
        <button
          type="button"
          className="button secondary"
          disabled={busy}
          onClick={() => {
            setPending(null);
            pending.reject(new Error("Not done: this action needs your authentication code."));
          }}
        >
          Cancel
        </button>
      </div>
    </form>
  ) : null;
  return { guard, prompt };
}
