import { useEffect, useId, useState } from "react";
import { api, unwrap } from "../api/client";
import { useMerchant } from "../session";
import { ErrorMessage, errorText, Loaded, PageHeader, safeHref, useLoad } from "../ui";

const HEX = /^#[0-9a-fA-F]{6}$/;

// Settings → Branding: what customers see on the checkout page (GET/PATCH …/profile), with a
// small live preview. The logo is shown only for an http(s) URL.
export function Branding() {
  const { merchantId, can } = useMerchant();
  const [profile, reload] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/profile", { params: { path: { merchantId } }, signal })),
    [merchantId],
  );
  const [displayName, setDisplayName] = useState("");
  const [logoUrl, setLogoUrl] = useState("");
  const [accent, setAccent] = useState("#2563eb");
  const [gasFee, setGasFee] = useState<"merchant" | "buyer">("merchant");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const id = useId();
  const writable = can("settings:write");

  useEffect(() => {
    if (profile.status !== "ok") return;
    setDisplayName(profile.data.displayName);
    setLogoUrl(profile.data.logoUrl ?? "");
    setAccent(profile.data.accentColor ?? "#2563eb");
    setGasFee(profile.data.gaslessFeePaidBy);
  }, [profile]);

  const logo = safeHref(logoUrl.trim());
  const accentOk = HEX.test(accent);

  return (
    <>
      <PageHeader title="Branding" />
      <p className="help">Your customers see these on the checkout page.</p>
      <Loaded state={profile}>
        {() => (
          <div className="split">
            <form
              className="card"
              onSubmit={(e) => {
                e.preventDefault();
                setBusy(true);
                setError(null);
                setSaved(false);
                unwrap(
                  api.PATCH("/v1/merchants/{merchantId}/profile", {
                    params: { path: { merchantId } },
                    body: { displayName: displayName.trim(), logoUrl: logoUrl.trim() === "" ? null : logoUrl.trim(), accentColor: accent.toLowerCase(), gaslessFeePaidBy: gasFee },
                  }),
                )
                  .then(() => {
                    setSaved(true);
                    reload();
                  })
                  .catch((err: unknown) => setError(errorText(err)))
                  .finally(() => setBusy(false));
              }}
            >
              <fieldset disabled={!writable}>
                <legend className="visually-hidden">Checkout branding</legend>
                <div className="field">
                  <label htmlFor={`${id}-n`}>Display name</label>
                  <input id={`${id}-n`} required maxLength={100} value={displayName} onChange={(e) => setDisplayName(e.target.value)} />
                </div>
                <div className="field">
                  <label htmlFor={`${id}-l`}>Logo URL</label>
                  <input id={`${id}-l`} type="url" placeholder="https://…" value={logoUrl} onChange={(e) => setLogoUrl(e.target.value)} />
                </div>
                <div className="field">
                  <label htmlFor={`${id}-c`}>Accent colour</label>
                  <div className="row">
                    <input
                      type="color"
                      aria-label="Accent colour picker"
                      value={accentOk ? accent.toLowerCase() : "#000000"}
                      onChange={(e) => setAccent(e.target.value)}
                    />
                    <input
                      id={`${id}-c`}
                      className="mono short"
                      pattern="#[0-9a-fA-F]{6}"
                      value={accent}
                      onChange={(e) => setAccent(e.target.value)}
                      aria-describedby={`${id}-c-help`}
                    />
                  </div>
                  <p className="help" id={`${id}-c-help`}>
                    A hex colour like #2563eb.
                  </p>
                </div>
                <div className="field">
                  <label htmlFor={`${id}-g`}>Network fee of payments without gas</label>
                  <select id={`${id}-g`} value={gasFee} onChange={(e) => setGasFee(e.target.value === "buyer" ? "buyer" : "merchant")} aria-describedby={`${id}-g-help`}>
                    <option value="merchant">You pay it (charged with your fee)</option>
                    <option value="buyer">The customer pays it (added to what they sign)</option>
                  </select>
                  <p className="help" id={`${id}-g-help`}>
                    Customers paying USDC without ETH sign a transfer that the service sends for them. Its network fee is charged to you by default, or added to the customer's total.
                  </p>
                </div>
                <ErrorMessage error={error} />
                {saved ? (
                  <p role="status" className="notice">
                    Saved.
                  </p>
                ) : null}
                {writable ? (
                  <button type="submit" className="button" disabled={busy}>
                    Save
                  </button>
                ) : null}
              </fieldset>
            </form>
            <section className="card preview" aria-labelledby={`${id}-p`}>
              <h2 id={`${id}-p`}>Preview</h2>
              <div className="checkout-preview" style={{ borderTopColor: accentOk ? accent : undefined }}>
                <p className="checkout-merchant">
                  {logo ? <img src={logo} alt="" width={32} height={32} referrerPolicy="no-referrer" /> : null}
                  <strong>{displayName || "Your shop"}</strong>
                </p>
                <p>Pay $12.50</p>
                <span className="preview-button" style={accentOk ? { background: accent } : undefined}>
                  Pay with crypto
                </span>
              </div>
            </section>
          </div>
        )}
      </Loaded>
    </>
  );
}
