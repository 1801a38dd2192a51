import { useState, type FormEvent } from "react";
import * as auth from "../api/auth";
import { useSession } from "../session";
import { ErrorMessage, errorText } from "../ui";

// The sign-in page: email and password (POST /v1/auth/login), then an authentication code when
// the server asks for a second factor (POST /v1/auth/login/second-factor).
export function SignIn({ notice }: { notice: string | null }) {
  const session = useSession();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [challenge, setChallenge] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [pasted, setPasted] = useState("");

  async function finish(r: auth.AuthResult) {
    if (r.status === "second_factor_required") {
      if (!r.challengeToken) throw new Error("The server asked for a second factor without a challenge.");
      setChallenge(r.challengeToken);
      setCode("");
      return;
    }
    await session.signedIn(r);
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const p = challenge ? auth.loginSecondFactor(challenge, code.trim()) : auth.login(email.trim(), password);
    p.then(finish)
      .catch((err: unknown) => {
        if (err instanceof Error && "code" in err && err.code === "invalid_credentials") {
          setError("The email or password is not right.");
        } else {
          setError(errorText(err));
        }
      })
      .finally(() => setBusy(false));
  }

  return (
    <main className="signin" id="main">
      <div className="card signin-card">
        <h1>Sign in to paymentsd</h1>
        {notice ? (
          <p className="notice" role="status">
            {notice}
          </p>
        ) : null}
        <form onSubmit={submit} noValidate={false}>
          {challenge === null ? (
            <>
              <div className="field">
                <label htmlFor="signin-email">Email</label>
                <input
                  id="signin-email"
                  type="email"
                  autoComplete="username"
                  required
                  value={email}
                  onChange={(e) => setEmail(e.target.value)}
                />
              </div>
              <div className="field">
                <label htmlFor="signin-password">Password</label>
                <input
                  id="signin-password"
                  type="password"
                  autoComplete="current-password"
                  required
                  value={password}
                  onChange={(e) => setPassword(e.target.value)}
                />
              </div>
            </>
          ) : (
            <div className="field">
              <label htmlFor="signin-code">Authentication code</label>
              <input
                id="signin-code"
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                autoFocus
                value={code}
                onChange={(e) => setCode(e.target.value)}
                aria-describedby="signin-code-help"
              />
              <p className="help" id="signin-code-help">
                The 6-digit code from your authenticator app, or a recovery code.
              </p>
            </div>
          )}
          <ErrorMessage error={error} />
          <div className="row">
            <button type="submit" className="button" disabled={busy}>
              {busy ? "Signing in…" : "Sign in"}
            </button>
            {challenge !== null ? (
              <button type="button" className="button secondary" onClick={() => setChallenge(null)}>
                Back
              </button>
            ) : null}
          </div>
        </form>
        <details className="token-signin">
          <summary>Use an access token instead</summary>
          <p className="help">
            A dashboard token from <code>paymentsd tokens issue</code> or your identity provider. It is kept in this
            tab's memory only and cannot be refreshed: sign in again when it expires.
          </p>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              setError(null);
              try {
                session.usePastedToken(pasted.trim());
              } catch (err) {
                setError(errorText(err));
              }
            }}
          >
            <div className="field">
              <label htmlFor="signin-token">Access token</label>
              <textarea id="signin-token" rows={3} spellCheck={false} value={pasted} onChange={(e) => setPasted(e.target.value)} />
            </div>
            <button type="submit" className="button secondary">
              Use token
            </button>
          </form>
        </details>
      </div>
    </main>
  );
}
