import { useEffect, useId, useState, type FormEvent } from "react";
import * as auth from "../api/auth";
import { api, unwrap, type Schemas } from "../api/client";
import { getPasskey, passkeysSupported } from "../api/webauthn";
import { currentPath, currentQuery, replaceRoute } from "../router";
import { useSession } from "../session";
import { ErrorMessage, errorText } from "../ui";

interface Challenge {
  token: string;
  methods: auth.SecondFactorMethod[];
}

const METHODS: readonly auth.SecondFactorMethod[] = ["totp", "recovery_code", "passkey"];

function parseMethods(s: string | null): auth.SecondFactorMethod[] {
  return (s ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter((m): m is auth.SecondFactorMethod => (METHODS as readonly string[]).includes(m));
}

// The sign-in page: email and password (POST /v1/auth/login), then — when the server answers
// second_factor_required — an authentication code (POST /v1/auth/login/second-factor) or a
// passkey (the passkey login ceremony). The OpenID Connect provider, when configured, is a plain
// link to GET /v1/auth/oidc/start; its callback comes back here as
// #/sign-in?challengeToken=…&methods=… (a second factor is due) or #/sign-in?error=CODE.
export function SignIn({ notice }: { notice: string | null }) {
  const session = useSession();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [pasted, setPasted] = useState("");
  const [providers, setProviders] = useState<Schemas["AuthProviders"] | null>(null);
  const headingId = useId();

  useEffect(() => {
    if (currentPath() !== "/sign-in") return;
    const q = currentQuery();
    const token = q.get("challengeToken");
    const err = q.get("error");
    if (token) {
      setChallenge({ token, methods: parseMethods(q.get("methods")) });
    } else if (err) {
      setError(auth.oidcErrorText(err));
    }
    if (token || err) replaceRoute("sign-in");
  }, []);

  useEffect(() => {
    let live = true;
    auth.providers().then(
      (p) => {
        if (live) setProviders(p);
      },
      () => undefined, // the password form works without it
    );
    return () => {
      live = false;
    };
  }, []);

  async function finish(r: auth.AuthResult) {
    if (r.status === "second_factor_required") {
      if (!r.challengeToken) throw new Error("The server asked for a second factor without a challenge.");
      setChallenge({ token: r.challengeToken, methods: r.methods ?? [] });
      setCode("");
      return;
    }
    await session.signedIn(r);
    if (currentPath() === "/sign-in" || currentPath() === "/accept-invitation") replaceRoute("overview");
  }

  function run(p: Promise<auth.AuthResult>) {
    const step = challenge ? "code" : "password";
    setBusy(true);
    setError(null);
    p.then(finish)
      .catch((err: unknown) => setError(auth.authErrorText(err, step)))
      .finally(() => setBusy(false));
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    run(challenge ? auth.loginSecondFactor(challenge.token, code.trim()) : auth.login(email.trim(), password));
  }

  function usePasskey() {
    if (!challenge) return;
    const token = challenge.token;
    run(
      unwrap(api.POST("/v1/auth/login/passkey/begin", { body: { challengeToken: token } }))
        .then((opts) => getPasskey(opts))
        .then((credential) => unwrap(api.POST("/v1/auth/login/passkey/finish", { body: { challengeToken: token, credential } }))),
    );
  }

  const oidc = providers?.oidc.enabled ? providers.oidc : null;

  return (
    <main className="signin" id="main">
      <div className="card signin-card">
        <h1 id={headingId}>Sign in to paymentsd</h1>
        {notice ? (
          <p className="notice" role="status">
            {notice}
          </p>
        ) : null}
        <form onSubmit={submit} aria-labelledby={headingId}>
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
            <>
              <p>Your account has two-factor authentication. Confirm it is you.</p>
              <div className="field">
                <label htmlFor="signin-code">Authentication code</label>
                <input
                  id="signin-code"
                  autoComplete="one-time-code"
                  required
                  autoFocus
                  value={code}
                  onChange={(e) => setCode(e.target.value)}
                  aria-describedby="signin-code-help"
                />
                <p className="help" id="signin-code-help">
                  The 6-digit code from your authenticator app, or one of your recovery codes.
                </p>
              </div>
            </>
          )}
          <ErrorMessage error={error} />
          <div className="row">
            <button type="submit" className="button" disabled={busy}>
              {challenge === null ? (busy ? "Signing in…" : "Sign in") : busy ? "Verifying…" : "Verify"}
            </button>
            {challenge !== null && challenge.methods.includes("passkey") && passkeysSupported() ? (
              <button type="button" className="button secondary" disabled={busy} onClick={usePasskey}>
                Use a passkey
              </button>
            ) : null}
            {challenge !== null ? (
              <button
                type="button"
                className="button secondary"
                onClick={() => {
                  setChallenge(null);
                  setError(null);
                }}
              >
                Back
              </button>
            ) : null}
          </div>
        </form>
        {oidc && challenge === null ? (
          <p className="signin-alt">
            <a className="button secondary" href="/v1/auth/oidc/start">
              Sign in with {oidc.name ?? "your identity provider"}
            </a>
          </p>
        ) : null}
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

// #/accept-invitation?token=… — the link an owner's invitation makes. A new person chooses a
// password (at least 12 characters); someone who has an account gives their current one.
export function AcceptInvitation() {
  const session = useSession();
  const [token] = useState(() => currentQuery().get("token") ?? "");
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [challenge, setChallenge] = useState<Challenge | null>(null);
  const [code, setCode] = useState("");
  async function done(r: auth.AuthResult) {
    await session.signedIn(r);
    replaceRoute("overview");
  }
  function second(p: Promise<auth.AuthResult>) {
    setBusy(true);
    setError(null);
    p.then(done)
      .catch((err: unknown) => setError(auth.authErrorText(err, "code")))
      .finally(() => setBusy(false));
  }
  if (challenge) {
    const ch = challenge;
    return (
      <main className="signin" id="main">
        <div className="card signin-card">
          <h1>Accept your invitation</h1>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              second(auth.loginSecondFactor(ch.token, code.trim()));
            }}
          >
            <p>Your account has two-factor authentication. Confirm it is you.</p>
            <div className="field">
              <label htmlFor="invite-code">Authentication code</label>
              <input id="invite-code" autoComplete="one-time-code" required autoFocus value={code} onChange={(e) => setCode(e.target.value)} />
              <p className="help">The 6-digit code from your authenticator app, or one of your recovery codes.</p>
            </div>
            <ErrorMessage error={error} />
            <div className="row">
              <button type="submit" className="button" disabled={busy}>
                {busy ? "Verifying…" : "Verify"}
              </button>
              {ch.methods.includes("passkey") && passkeysSupported() ? (
                <button
                  type="button"
                  className="button secondary"
                  disabled={busy}
                  onClick={() =>
                    second(
                      unwrap(api.POST("/v1/auth/login/passkey/begin", { body: { challengeToken: ch.token } }))
                        .then((opts) => getPasskey(opts))
                        .then((credential) => unwrap(api.POST("/v1/auth/login/passkey/finish", { body: { challengeToken: ch.token, credential } }))),
                    )
                  }
                >
                  Use a passkey
                </button>
              ) : null}
            </div>
          </form>
        </div>
      </main>
    );
  }
  return (
    <main className="signin" id="main">
      <div className="card signin-card">
        <h1>Accept your invitation</h1>
        {token === "" ? (
          <p className="error" role="alert">
            This link has no invitation token. Open the link from your invitation again.
          </p>
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              setBusy(true);
              setError(null);
              auth
                .acceptInvitation(token, password === "" ? undefined : password)
                .then(async (r) => {
                  if (r.status === "second_factor_required" && r.challengeToken) {
                    setChallenge({ token: r.challengeToken, methods: r.methods ?? [] });
                    return;
                  }
                  await done(r);
                })
                .catch((err: unknown) => setError(auth.authErrorText(err)))
                .finally(() => setBusy(false));
            }}
          >
            <div className="field">
              <label htmlFor="invite-password">Password</label>
              <input
                id="invite-password"
                type="password"
                autoComplete="new-password"
                minLength={12}
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                aria-describedby="invite-password-help"
              />
              <p className="help" id="invite-password-help">
                New to paymentsd? Choose a password of at least 12 characters. Already have an account? Enter its password.
              </p>
            </div>
            <ErrorMessage error={error} />
            <button type="submit" className="button" disabled={busy}>
              {busy ? "Accepting…" : "Accept invitation"}
            </button>
          </form>
        )}
      </div>
    </main>
  );
}
