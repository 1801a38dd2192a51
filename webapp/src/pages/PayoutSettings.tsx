// Settings → Payout settings (issue 23): the merchant's payout policy, applied to withdrawals and
// refunds created from then on — the approval threshold (a second person approves anything
// above it), withdrawals only to saved addresses, the address book's cooling-off period, a
// rolling 24-hour limit on money leaving, how long a refund's claim link lasts, and whether the
// checkout page offers an overpaying customer the excess back. GET/PATCH …/payout-settings
// (owner or admin to change, x-second-factor: recent, audited). Only changed fields are sent;
// an emptied amount sends null (off).
import { useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { formatCents, formatDate, parseDollars } from "../format";
import { href } from "../router";
import { useMerchant } from "../session";
import { useStepUp } from "../stepup";
import { ErrorMessage, errorText, Loaded, PageHeader, SavedNotice, useSettings } from "../ui";

type Settings = Schemas["PayoutSettings"];

export function PayoutSettings() {
  const { merchantId, mode, can } = useMerchant();
  const [settings, saved, onSaved] = useSettings(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/payout-settings", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  return (
    <>
      <PageHeader title="Payout settings" />
      <p className="help">
        Rules for money leaving your balance — withdrawals and refunds. Saved recipients are kept in{" "}
        <a href={href("settings", "address-book")}>the address book</a>; what waits for a second person is in{" "}
        <a href={href("approvals")}>the approvals queue</a>.
      </p>
      <Loaded state={settings}>
        {(s) => <SettingsForm key={s.updatedAt ?? "default"} s={s} writable={can("settings:write")} merchantId={merchantId} onSaved={onSaved} />}
      </Loaded>
      <SavedNotice saved={saved} />
    </>
  );
}

const dollars = (c: number | null) => (c === null ? "" : (c / 100).toFixed(2));

function SettingsForm({ s, writable, merchantId, onSaved }: { s: Settings; writable: boolean; merchantId: string; onSaved: () => void }) {
  const [threshold, setThreshold] = useState(dollars(s.approvalThresholdCents));
  const [allowlist, setAllowlist] = useState(s.allowlistOnly);
  const [cooling, setCooling] = useState(String(s.addressCoolingOffHours));
  const [limit, setLimit] = useState(dollars(s.dailyLimitCents));
  const [claimDays, setClaimDays] = useState(String(s.refundClaimDays));
  const [offer, setOffer] = useState(s.offerOverpaymentRefunds);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const { guard, prompt } = useStepUp();
  const id = useId();

  // amount reads an optional dollar field: "" is null (off), else cents, else undefined (invalid).
  const amount = (text: string): number | null | undefined => {
    if (text.trim() === "") return null;
    return parseDollars(text) ?? undefined;
  };
  const whole = (text: string, min: number, max: number): number | undefined => {
    const n = /^\d{1,4}$/.test(text.trim()) ? Number(text.trim()) : NaN;
    return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
  };

  return (
    <>
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        const t = amount(threshold);
        const l = amount(limit);
        const h = whole(cooling, 0, 720);
        const d = whole(claimDays, 1, 365);
        if (t === undefined) return setError("Enter the approval threshold in dollars, like 1000, or leave it empty to turn approvals off.");
        if (l === undefined || l === 0) return setError("Enter the daily limit in dollars, like 10000, or leave it empty for no limit.");
        if (h === undefined) return setError("The cooling-off period is a whole number of hours from 0 to 720.");
        if (d === undefined) return setError("The claim period is a whole number of days from 1 to 365.");
        const body: Schemas["UpdatePayoutSettingsRequest"] = {};
        if (t !== s.approvalThresholdCents) body.approvalThresholdCents = t;
        if (allowlist !== s.allowlistOnly) body.allowlistOnly = allowlist;
        if (h !== s.addressCoolingOffHours) body.addressCoolingOffHours = h;
        if (l !== s.dailyLimitCents) body.dailyLimitCents = l;
        if (d !== s.refundClaimDays) body.refundClaimDays = d;
        if (offer !== s.offerOverpaymentRefunds) body.offerOverpaymentRefunds = offer;
        if (Object.keys(body).length === 0) return setError("Nothing changed.");
        setBusy(true);
        guard(() => unwrap(api.PATCH("/v1/merchants/{merchantId}/payout-settings", { params: { path: { merchantId } }, body })))
          .then(() => onSaved())
          .catch((err: unknown) => setError(errorText(err)))
          .finally(() => setBusy(false));
      }}
    >
      <fieldset disabled={!writable || busy}>
        <legend>Approvals</legend>
        <div className="field">
          <label htmlFor={`${id}-t`}>Approval threshold (USD)</label>
          <input id={`${id}-t`} inputMode="decimal" value={threshold} onChange={(e) => setThreshold(e.target.value)} aria-describedby={`${id}-th`} />
          <p className="help" id={`${id}-th`}>
            A withdrawal or refund above this waits until a second person with the admin or owner role approves it. Empty: no approvals.
          </p>
        </div>
      </fieldset>
      <fieldset disabled={!writable || busy}>
        <legend>Recipients</legend>
        <label className="check" htmlFor={`${id}-al`}>
          <input id={`${id}-al`} type="checkbox" checked={allowlist} onChange={(e) => setAllowlist(e.target.checked)} />
          Withdrawals, and refunds you address, only to saved addresses
        </label>
        <div className="field">
          <label htmlFor={`${id}-h`}>Cooling-off period (hours)</label>
          <input id={`${id}-h`} className="short" inputMode="numeric" value={cooling} onChange={(e) => setCooling(e.target.value)} aria-describedby={`${id}-hh`} />
          <p className="help" id={`${id}-hh`}>
            How long after it is saved a new address-book entry can receive withdrawals and refunds (0 to 720; 0: at once).
          </p>
        </div>
      </fieldset>
      <fieldset disabled={!writable || busy}>
        <legend>Limits</legend>
        <div className="field">
          <label htmlFor={`${id}-l`}>Daily limit (USD)</label>
          <input id={`${id}-l`} inputMode="decimal" value={limit} onChange={(e) => setLimit(e.target.value)} aria-describedby={`${id}-lh`} />
          <p className="help" id={`${id}-lh`}>
            Most money that may leave — withdrawals and refunds together — in any 24 hours; exactly the limit is allowed. Empty: no limit.
          </p>
        </div>
      </fieldset>
      <fieldset disabled={!writable || busy}>
        <legend>Refunds</legend>
        <div className="field">
          <label htmlFor={`${id}-d`}>Claim period (days)</label>
          <input id={`${id}-d`} className="short" inputMode="numeric" value={claimDays} onChange={(e) => setClaimDays(e.target.value)} aria-describedby={`${id}-dh`} />
          <p className="help" id={`${id}-dh`}>
            How long a customer has to claim a refund through its link; then it is cancelled and the amount returns to the balance (1 to 365).
          </p>
        </div>
        <label className="check" htmlFor={`${id}-o`}>
          <input id={`${id}-o`} type="checkbox" checked={offer} onChange={(e) => setOffer(e.target.checked)} />
          Offer overpaying customers the excess back on the checkout page
        </label>
      </fieldset>
      <dl className="fields">
        <dt>Now</dt>
        <dd>
          {s.approvalThresholdCents === null ? "no approvals" : `approvals above ${formatCents(s.approvalThresholdCents)}`};{" "}
          {s.dailyLimitCents === null ? "no daily limit" : `at most ${formatCents(s.dailyLimitCents)} a day`}
        </dd>
        <dt>Updated</dt>
        <dd>{formatDate(s.updatedAt)}</dd>
        {s.stricterPolicy ? (
          <>
            <dt>Loosening waits</dt>
            <dd>
              The looser rules apply from {formatDate(s.stricterPolicyUntil)}: a loosening waits out the cooling-off period
              that was in force. Until then the stricter of these and the earlier rules apply (
              {s.stricterPolicy.approvalThresholdCents === null ? "no approvals" : `approvals above ${formatCents(s.stricterPolicy.approvalThresholdCents)}`};{" "}
              {s.stricterPolicy.allowlistOnly ? "saved addresses only" : "any address"}; {s.stricterPolicy.addressCoolingOffHours} h cooling-off;{" "}
              {s.stricterPolicy.dailyLimitCents === null ? "no daily limit" : `at most ${formatCents(s.stricterPolicy.dailyLimitCents)} a day`}).
            </dd>
          </>
        ) : null}
      </dl>
      <ErrorMessage error={error} />
      {writable ? (
        <button type="submit" className="button" disabled={busy}>
          {busy ? "Saving…" : "Save payout settings"}
        </button>
      ) : null}
    </form>
    {prompt}
    </>
  );
}
