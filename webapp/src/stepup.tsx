// Step-up: an operation marked `x-second-factor: recent` (a new secret key, a withdrawal, a team
// change, the team's security settings) — or a change of one's own second factors — answers 403 step_up_required when the session's second factor is
// not recent. guard() then asks for an authentication code (or a passkey) inline, exchanges it
// (POST /v1/auth/step-up, or the passkey step-up) for a fresh token, and runs the action again —
// with the same Idempotency-Key, so it still happens once. 403 second_factor_required (the
// merchant requires a second factor the person has not set up) cannot be stepped up: the prompt
// sends the person to Settings → Security instead.
import { useId, useState, type ReactNode } from "react";
import { isSecondFactorMissing, isStepUpRequired } from "./api/auth";
import { api, unwrap } from "./api/client";
import { getPasskey, passkeysSupported } from "./api/webauthn";
import { href } from "./router";
import { useSession } from "./session";
import { ErrorMessage, errorText } from "./ui";

export function needsStepUp(e: unknown): boolean {
  return isStepUpRequired(e);
}

interface Pending {
  retry: () => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export function useStepUp(): { guard: <T>(action: () => Promise<T>) => Promise<T>; prompt: ReactNode } {
  const session = useSession();
  const [pending, setPending] = useState<Pending | null>(null);
  const [missing, setMissing] = useState(false);
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const me = session.state.status === "signed_in" ? session.state.session.me : null;
  const hasPasskey = (me?.passkeyCount ?? 0) > 0 && passkeysSupported();

  const guard = <T,>(action: () => Promise<T>): Promise<T> =>
    action().catch((e: unknown) => {
      if (isSecondFactorMissing(e)) {
        setMissing(true);
        throw e;
      }
      if (!needsStepUp(e)) throw e;
      return new Promise<T>((resolve, reject) => {
        setCode("");
        setError(null);
        setMissing(false);
        setPending({ retry: action, resolve: resolve as (v: unknown) => void, reject });
      });
    });

  function finish(p: Pending, step: Promise<void>) {
    setBusy(true);
    setError(null);
    step
      .then(() => p.retry())
      .then(
        (v) => {
          setPending(null);
          p.resolve(v);
        },
        (err: unknown) => setError(errorText(err)),
      )
      .finally(() => setBusy(false));
  }

  if (missing && !pending) {
    return {
      guard,
      prompt: (
        <div className="card secret" role="alert">
          <p>
            Your team requires two-factor authentication, and your account does not have it yet.{" "}
            <a href={href("settings", "security")}>Set it up in Settings → Security</a>.
          </p>
          <button type="button" className="button secondary" onClick={() => setMissing(false)}>
            Dismiss
          </button>
        </div>
      ),
    };
  }

  const prompt = pending ? (
    <form
      className="card secret"
      aria-labelledby={`${id}-h`}
      onSubmit={(e) => {
        e.preventDefault();
        finish(pending, session.stepUp(code.trim()));
      }}
    >
      <h2 id={`${id}-h`}>Confirm it is you</h2>
      <p className="help">This action needs your second factor again (at most every 10 minutes).</p>
      <div className="field">
        <label htmlFor={id}>Authentication code</label>
        <input
          id={id}
          autoComplete="one-time-code"
          required
          autoFocus
          value={code}
          onChange={(e) => setCode(e.target.value)}
          aria-describedby={`${id}-help`}
        />
        <p className="help" id={`${id}-help`}>
          The 6-digit code from your authenticator app, or a recovery code.
        </p>
      </div>
      <ErrorMessage error={error} />
      <div className="row">
        <button type="submit" className="button" disabled={busy}>
          {busy ? "Verifying…" : "Verify"}
        </button>
        {hasPasskey ? (
          <button
            type="button"
            className="button secondary"
            disabled={busy}
            onClick={() =>
              finish(
                pending,
                unwrap(api.POST("/v1/auth/step-up/passkey/begin"))
                  .then((opts) => getPasskey(opts))
                  .then((credential) => unwrap(api.POST("/v1/auth/step-up/passkey/finish", { body: { credential } })))
                  .then((r) => session.tokenFrom(r)),
              )
            }
          >
            Use a passkey
          </button>
        ) : null}
        <button
          type="button"
          className="button secondary"
          disabled={busy}
          onClick={() => {
            setPending(null);
            pending.reject(new Error("Not done: this action needs your second factor."));
          }}
        >
          Cancel
        </button>
      </div>
    </form>
  ) : null;
  return { guard, prompt };
}
