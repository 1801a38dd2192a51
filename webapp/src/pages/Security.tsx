import { useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { createPasskey, passkeysSupported } from "../api/webauthn";
import { formatDate } from "../format";
import { useMerchant, useSession } from "../session";
import { useStepUp } from "../stepup";
import { ACTIONS, ConfirmButton, CopyButton, DataTable, ErrorMessage, errorText, Loaded, PageHeader, useLoad } from "../ui";

// Settings → Security: the signed-in person's own second factors, sessions and password, and —
// for owners — whether the team must use two-factor authentication.
export function Security() {
  const s = useSession();
  const session = s.state.status === "signed_in" ? s.state.session : null;
  if (!session || session.kind !== "person" || !session.me) {
    return (
      <>
        <PageHeader title="Security" />
        <p className="card">Signed in with an access token: there is no account here to secure. Sign in with your email to manage it.</p>
        <TeamSecurity />
      </>
    );
  }
  return (
    <>
      <PageHeader title="Security" />
      <TwoFactor me={session.me} />
      <Passkeys />
      <Sessions />
      <ChangePassword />
      <TeamSecurity />
    </>
  );
}

function TwoFactor({ me }: { me: Schemas["Me"] }) {
  const s = useSession();
  const { guard, prompt } = useStepUp();
  const [enrollment, setEnrollment] = useState<Schemas["TotpEnrollment"] | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();

  function act(p: Promise<void>) {
    setBusy(true);
    setError(null);
    p.catch((e: unknown) => setError(errorText(e))).finally(() => setBusy(false));
  }

  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Two-factor authentication</h2>
      {prompt}
      {codes ? (
        <div className="secret" role="region" aria-labelledby={`${id}-rc`}>
          <h3 id={`${id}-rc`}>Your recovery codes</h3>
          <p>Each code signs you in once if you lose your authenticator app. Save them now: they are shown only once.</p>
          <ul className="codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
          <div className="row">
            <CopyButton text={codes.join("\n")} />
            <button type="button" className="button" onClick={() => setCodes(null)}>
              I have saved these codes
            </button>
          </div>
        </div>
      ) : me.totpEnabled ? (
        <>
          <p>
            <strong>On:</strong> signing in asks for a code from your authenticator app.
          </p>
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              act(
                unwrap(api.DELETE("/v1/auth/totp", { body: { code: code.trim() } })).then(async () => {
                  setCode("");
                  await s.reloadMe();
                }),
              );
            }}
          >
            <div className="field inline">
              <label htmlFor={`${id}-off`}>Authentication code</label>
              <input id={`${id}-off`} autoComplete="one-time-code" required value={code} onChange={(e) => setCode(e.target.value)} />
            </div>
            <button type="submit" className="button danger-outline" disabled={busy}>
              Turn off
            </button>
          </form>
        </>
      ) : enrollment ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            act(
              guard(() => unwrap(api.POST("/v1/auth/totp/confirm", { body: { code: code.trim() } }))).then(async (r) => {
                setEnrollment(null);
                setCode("");
                setCodes(r.recoveryCodes);
                await s.reloadMe();
              }),
            );
          }}
        >
          <p>Scan the QR code with your authenticator app, or type the setup key into it. Then enter the code it shows.</p>
          {enrollment.qrCodePng.startsWith("data:image/png;base64,") ? (
            <img className="qr" src={enrollment.qrCodePng} alt="QR code for your authenticator app" width={200} height={200} />
          ) : null}
          <div className="field">
            <label htmlFor={`${id}-key`}>Setup key</label>
            <div className="row">
              <input id={`${id}-key`} className="mono" readOnly value={enrollment.secret} />
              <CopyButton text={enrollment.secret} />
            </div>
          </div>
          <div className="field">
            <label htmlFor={`${id}-code`}>Authentication code</label>
            <input
              id={`${id}-code`}
              inputMode="numeric"
              autoComplete="one-time-code"
              required
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          </div>
          <div className="row">
            <button type="submit" className="button" disabled={busy}>
              Turn on
            </button>
            <button type="button" className="button secondary" onClick={() => setEnrollment(null)}>
              Not now
            </button>
          </div>
        </form>
      ) : (
        <>
          <p>
            <strong>Off.</strong> Add a second step to signing in: a code from an authenticator app on your phone.
          </p>
          <button
            type="button"
            className="button"
            disabled={busy}
            onClick={() =>
              act(
                guard(() => unwrap(api.POST("/v1/auth/totp/enroll"))).then((r) => {
                  setCode("");
                  setEnrollment(r);
                }),
              )
            }
          >
            Set up authenticator app
          </button>
        </>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}

function Passkeys() {
  const s = useSession();
  const [list, reload] = useLoad((signal) => unwrap(api.GET("/v1/auth/passkeys", { signal })), []);
  const { guard, prompt } = useStepUp();
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Passkeys</h2>
      <p className="help">A passkey (a security key, or your device's fingerprint or face unlock) is a second factor you cannot mistype.</p>
      {prompt}
      <Loaded state={list}>
        {(l) =>
          l.data.length === 0 ? (
            <p className="muted">No passkeys yet.</p>
          ) : (
            <ul className="rows">
              {l.data.map((p) => (
                <li key={p.id} className="row spread">
                  <span>
                    <strong>{p.name}</strong> <span className="muted">added {formatDate(p.createdAt)}{p.lastUsedAt ? `, last used ${formatDate(p.lastUsedAt)}` : ""}</span>
                  </span>
                  <ConfirmButton
                    label="Delete"
                    ariaLabel={`Delete passkey ${p.name}`}
                    confirmLabel="Delete passkey"
                    confirmAriaLabel={`Delete passkey ${p.name}`}
                    question={`Delete the passkey ${p.name}? It no longer signs you in.`}
                    onConfirm={async () => {
                      await guard(() => unwrap(api.DELETE("/v1/auth/passkeys/{passkeyId}", { params: { path: { passkeyId: p.id } } })));
                      reload();
                      await s.reloadMe();
                    }}
                  />
                </li>
              ))}
            </ul>
          )
        }
      </Loaded>
      {passkeysSupported() ? (
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            setBusy(true);
            setError(null);
            const n = name.trim();
            guard(() => unwrap(api.POST("/v1/auth/passkeys/register/begin")))
              .then((opts) => createPasskey(opts))
              .then((credential) => unwrap(api.POST("/v1/auth/passkeys/register/finish", { body: { name: n, credential } })))
              .then(async () => {
                setName("");
                reload();
                await s.reloadMe();
              })
              .catch((err: unknown) => setError(errorText(err)))
              .finally(() => setBusy(false));
          }}
        >
          <div className="field inline">
            <label htmlFor={`${id}-name`}>Passkey name</label>
            <input id={`${id}-name`} required maxLength={100} placeholder="e.g. Work laptop" value={name} onChange={(e) => setName(e.target.value)} />
          </div>
          <button type="submit" className="button" disabled={busy}>
            Add a passkey
          </button>
        </form>
      ) : (
        <p className="muted">This browser cannot make passkeys.</p>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}

function device(ua: string): string {
  if (ua === "") return "Unknown device";
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrome\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : null;
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : null;
  if (browser && os) return `${browser} on ${os}`;
  return browser ?? os ?? ua.slice(0, 40);
}

function Sessions() {
  const s = useSession();
  const [list, reload] = useLoad((signal) => unwrap(api.GET("/v1/auth/sessions", { signal })), []);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Sessions</h2>
      <Loaded state={list}>
        {(l) => (
          <DataTable columns={["Device", "From", "Signed in", "Last used", ACTIONS]}>
            {l.data.map((x) => (
              <tr key={x.id}>
                <td>
                  <span title={x.userAgent}>{device(x.userAgent)}</span>
                  {x.current ? <span className="badge"> This session</span> : null}
                </td>
                <td>{x.ip || "—"}</td>
                <td>{formatDate(x.createdAt)}</td>
                <td>{formatDate(x.lastUsedAt)}</td>
                <td>
                  {x.current ? null : (
                    <button
                      type="button"
                      className="button secondary"
                      aria-label={`Sign out ${device(x.userAgent)}, last used ${formatDate(x.lastUsedAt)}`}
                      onClick={() => {
                        setError(null);
                        unwrap(api.DELETE("/v1/auth/sessions/{sessionId}", { params: { path: { sessionId: x.id } } })).then(reload, (e: unknown) =>
                          setError(errorText(e)),
                        );
                      }}
                    >
                      Sign out
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </Loaded>
      <ErrorMessage error={error} />
      <ConfirmButton
        label="Sign out everywhere"
        confirmLabel="Sign out everywhere"
        question="Sign out every session, this one too?"
        onConfirm={async () => {
          await unwrap(api.POST("/v1/auth/logout-all"));
          await s.signOut();
        }}
      />
    </section>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const id = useId();
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Change password</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          setDone(false);
          unwrap(api.POST("/v1/auth/password", { body: { currentPassword: current, newPassword: next } }))
            .then(() => {
              setCurrent("");
              setNext("");
              setDone(true);
            })
            .catch((err: unknown) => setError(errorText(err)))
            .finally(() => setBusy(false));
        }}
      >
        <div className="field">
          <label htmlFor={`${id}-cur`}>Current password</label>
          <input id={`${id}-cur`} type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-new`}>New password</label>
          <input
            id={`${id}-new`}
            type="password"
            autoComplete="new-password"
            minLength={12}
            required
            value={next}
            onChange={(e) => setNext(e.target.value)}
            aria-describedby={`${id}-new-help`}
          />
          <p className="help" id={`${id}-new-help`}>
            At least 12 characters. Your other sessions are signed out.
          </p>
        </div>
        <ErrorMessage error={error} />
        {done ? (
          <p role="status" className="notice">
            Password changed. Your other sessions are signed out.
          </p>
        ) : null}
        <button type="submit" className="button" disabled={busy}>
          Change password
        </button>
      </form>
    </section>
  );
}

function TeamSecurity() {
  const { merchantId, can } = useMerchant();
  const [sec, reload] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/security", { params: { path: { merchantId } }, signal })),
    [merchantId],
  );
  const { guard, prompt } = useStepUp();
  const [value, setValue] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const id = useId();
  if (!can("settings:read")) return null;
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Team</h2>
      {prompt}
      <Loaded state={sec}>
        {(x) =>
          can("security:write") ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                const require2fa = value ?? x.require2fa;
                setBusy(true);
                setError(null);
                setSaved(false);
                guard(() => unwrap(api.PUT("/v1/merchants/{merchantId}/security", { params: { path: { merchantId } }, body: { require2fa } })))
                  .then(() => {
                    setSaved(true);
                    setValue(null);
                    reload();
                  })
                  .catch((err: unknown) => setError(errorText(err)))
                  .finally(() => setBusy(false));
              }}
            >
              <div className="field check">
                <input id={`${id}-req`} type="checkbox" checked={value ?? x.require2fa} onChange={(e) => setValue(e.target.checked)} />
                <label htmlFor={`${id}-req`}>Require two-factor authentication for the team</label>
              </div>
              <p className="help">Members without a second factor can then do nothing here until they set one up.</p>
              <ErrorMessage error={error} />
              {saved ? (
                <p role="status" className="notice">
                  Saved.
                </p>
              ) : null}
              <button type="submit" className="button" disabled={busy}>
                Save
              </button>
            </form>
          ) : (
            <p>Two-factor authentication is {x.require2fa ? "required" : "not required"} for this team.</p>
          )
        }
      </Loaded>
    </section>
  );
}
