// The withdrawal form's review step (issue 23): GET …/withdrawals/estimate — the token amount at
// the current rate, the network fee in the chain's coin and in US dollars, whether the hot wallet
// can pay it now — and what the payout policy will do with it (a second person's approval above
// the threshold; an address outside the address book when only saved ones are allowed).
import { useId } from "react";
import { api, unwrap } from "../api/client";
import { formatCents, formatDate, formatUnits } from "../format";
import { useMerchant } from "../session";
import { useChains, useLoad } from "../ui";

export function Estimate({ amountInCents, chainId }: { amountInCents: number; chainId: string }) {
  const { merchantId } = useMerchant();
  const chains = useChains();
  const chain = chains.get(chainId);
  const [est] = useLoad(
    (signal) =>
      unwrap(api.GET("/v1/merchants/{merchantId}/withdrawals/estimate", { params: { path: { merchantId }, query: { amountInCents, chainId } }, signal })),
    [merchantId, amountInCents, chainId],
  );
  return (
    <section aria-labelledby="estimate-h" className="estimate">
      <h3 id="estimate-h">Estimate</h3>
      {est.status === "loading" ? (
        <p className="muted" role="status">
          Estimating…
        </p>
      ) : est.status === "error" ? (
        <p className="muted">No estimate now ({est.error}). The amounts are settled when the withdrawal is paid.</p>
      ) : (
        <dl className="fields">
          <dt>Token amount</dt>
          <dd>
            {est.data.amountAsset} {est.data.tokenSymbol} (smallest unit) at {est.data.rate} USD per {est.data.tokenSymbol}
          </dd>
          <dt>Network fee</dt>
          <dd>
            {est.data.networkFeeInCents !== null ? `about ${formatCents(est.data.networkFeeInCents)}` : "unknown in US dollars"}
            {est.data.networkFeeNative !== null
              ? chain
                ? ` (${formatUnits(est.data.networkFeeNative, chain.nativeDecimals)} ${chain.nativeSymbol})`
                : ` (${est.data.networkFeeNative} in the network's coin, smallest unit)`
              : ""}
            , paid by the service
          </dd>
          <dt>Hot wallet</dt>
          <dd>{est.data.hotWalletCanPay ? "can pay it now" : "cannot pay it now: the withdrawal waits until it is funded"}</dd>
        </dl>
      )}
    </section>
  );
}

// PolicyNotes says before confirming what the payout policy will do with this withdrawal.
export function PolicyNotes({ amountInCents, chainId, recipient }: { amountInCents: number; chainId: string; recipient: string }) {
  const { merchantId, mode, can } = useMerchant();
  const [policy] = useLoad(
    (signal) =>
      can("settings:read")
        ? Promise.all([
            unwrap(api.GET("/v1/merchants/{merchantId}/payout-settings", { params: { path: { merchantId } }, signal })),
            unwrap(api.GET("/v1/merchants/{merchantId}/address-book", { params: { path: { merchantId } }, signal })),
          ])
        : Promise.resolve(null),
    [merchantId, mode],
  );
  if (policy.status !== "ok" || policy.data === null) return null;
  const [s, book] = policy.data;
  // The rules in force: a loosening waiting out the cooling-off keeps the stricter earlier ones.
  const earlier = s.stricterPolicy;
  const lower = (a: number | null, b: number | null | undefined) => (a === null ? (b ?? null) : b == null ? a : Math.min(a, b));
  const threshold = lower(s.approvalThresholdCents, earlier?.approvalThresholdCents);
  const allowlistOnly = s.allowlistOnly || (earlier?.allowlistOnly ?? false);
  const notes: string[] = [];
  if (threshold !== null && amountInCents > threshold) {
    notes.push(`It is above the approval threshold (${formatCents(threshold)}): it waits until a second person with the admin or owner role approves it.`);
  }
  const saved = book.data.find((e) => e.chainId === chainId && e.address.toLowerCase() === recipient.toLowerCase());
  if (allowlistOnly && !saved) notes.push("This address is not in the address book, and withdrawals go only to saved addresses: it will be refused.");
  else if (allowlistOnly && saved && Date.parse(saved.usableAt) > Date.now()) notes.push(`${saved.label} is still cooling off: it cannot receive withdrawals yet.`);
  else if (saved) notes.push(`To ${saved.label} (address book).`);
  if (s.dailyLimitCents !== null) notes.push(`Daily limit: at most ${formatCents(s.dailyLimitCents)} leaves in any 24 hours.`);
  if (notes.length === 0) return null;
  return (
    <ul className="policy-notes">
      {notes.map((n) => (
        <li key={n}>{n}</li>
      ))}
    </ul>
  );
}

// SavedRecipients lets the withdrawal form fill the recipient from the address book (entries of
// the chosen network). One still cooling off can be picked: the cooling-off binds only while
// withdrawals go to saved addresses only (allowlistOnly), and then the review says it is refused.
export function SavedRecipients({ chainId, value, onPick }: { chainId: string; value: string; onPick: (address: string) => void }) {
  const { merchantId, can } = useMerchant();
  const id = useId();
  const [book] = useLoad(
    (signal) =>
      can("settings:read")
        ? unwrap(api.GET("/v1/merchants/{merchantId}/address-book", { params: { path: { merchantId } }, signal }))
        : Promise.resolve({ data: [] }),
    [merchantId],
  );
  if (book.status !== "ok") return null;
  const entries = book.data.data.filter((e) => e.chainId === chainId);
  if (entries.length === 0) return null;
  const now = Date.now();
  const chosen = entries.find((e) => e.address.toLowerCase() === value.trim().toLowerCase());
  return (
    <div className="field">
      <label htmlFor={id}>Saved recipient</label>
      <select id={id} value={chosen?.address ?? ""} onChange={(e) => onPick(e.target.value)}>
        <option value="">Another address</option>
        {entries.map((e) => {
          const cooling = Date.parse(e.usableAt) > now;
          return (
            <option key={e.id} value={e.address}>
              {e.label}
              {cooling ? ` (cooling off until ${formatDate(e.usableAt)})` : ""}
            </option>
          );
        })}
      </select>
    </div>
  );
}
