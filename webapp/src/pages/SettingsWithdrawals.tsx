import { useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { formatCents, formatDate, parseDollars } from "../format";
import { useMerchant } from "../session";
import { chainLabel, ErrorMessage, errorText, Loaded, PageHeader, SavedNotice, toggled, useChains, useSettings, type ChainNames } from "../ui";

// Settings → Withdrawals: GET/PATCH …/withdrawals/config. The chains shown are this mode's
// (the server keeps one list per mode); limits, token and the enabled flag are shared.
export function SettingsWithdrawals() {
  const { merchantId, mode, can } = useMerchant();
  const chains = useChains();
  const [config, saved, onSaved] = useSettings(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/withdrawals/config", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  return (
    <>
      <PageHeader title="Withdrawal settings" />
      <Loaded state={config}>
        {(c) => (
          <ConfigForm
            key={c.updatedAt}
            cfg={c}
            chains={chains}
            mode={mode}
            writable={can("settings:write")}
            merchantId={merchantId}
            onSaved={onSaved}
          />
        )}
      </Loaded>
      <SavedNotice saved={saved} />
    </>
  );
}

function ConfigForm({
  cfg,
  chains,
  mode,
  writable,
  merchantId,
  onSaved,
}: {
  cfg: Schemas["MerchantWithdrawalConfig"];
  chains: ChainNames;
  mode: Schemas["Mode"];
  writable: boolean;
  merchantId: string;
  onSaved: () => void;
}) {
  const [enabled, setEnabled] = useState(cfg.withdrawalsEnabled);
  const [chainIds, setChainIds] = useState<Set<string>>(new Set(cfg.chainIds));
  const [token, setToken] = useState(cfg.tokenSymbol);
  const [min, setMin] = useState((cfg.minAmountInCents / 100).toFixed(2));
  const [max, setMax] = useState((cfg.maxAmountInCents / 100).toFixed(2));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = { en: useId(), token: useId(), min: useId(), max: useId() };
  // This mode's served chains, plus any configured one the list lacks.
  const offered = new Set<string>(cfg.chainIds);
  for (const c of chains.values()) {
    if (c.isEnabled && c.isTestnet === (mode === "test")) offered.add(c.chainId);
  }

  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        const minC = parseDollars(min);
        const maxC = parseDollars(max);
        if (minC === null || maxC === null) return setError("Enter the limits in dollars, like 5 or 100000.");
        if (chainIds.size === 0) return setError("Choose at least one network.");
        // Only what changed: the server checks the limits it is sent (500 ≤ min ≤ max ≤
        // 10,000,000 cents), and an older configuration may predate those bounds.
        const body: Schemas["UpdateWithdrawalConfigRequest"] = {};
        if (enabled !== cfg.withdrawalsEnabled) body.withdrawalsEnabled = enabled;
        const chosen = [...offered].filter((c) => chainIds.has(c));
        if (chosen.join(",") !== cfg.chainIds.join(",")) body.chainIds = chosen;
        if (token.trim() !== cfg.tokenSymbol) body.tokenSymbol = token.trim();
        if (minC !== cfg.minAmountInCents) body.minAmountInCents = minC;
        if (maxC !== cfg.maxAmountInCents) body.maxAmountInCents = maxC;
        if (Object.keys(body).length === 0) return setError("Nothing changed.");
        setBusy(true);
        unwrap(api.PATCH("/v1/merchants/{merchantId}/withdrawals/config", { params: { path: { merchantId } }, body }))
          .then(() => {
            onSaved();
          })
          .catch((err: unknown) => setError(errorText(err)))
          .finally(() => setBusy(false));
      }}
    >
      <fieldset disabled={!writable || busy}>
        <legend>Withdrawals</legend>
        <label className="check" htmlFor={id.en}>
          <input id={id.en} type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          Withdrawals enabled
        </label>
        <fieldset>
          <legend>Networks ({mode} mode)</legend>
          {[...offered].map((c) => (
            <label key={c} className="check">
              <input
                type="checkbox"
                checked={chainIds.has(c)}
                onChange={(e) => setChainIds(toggled(chainIds, c, e.target.checked))}
              />
              {chainLabel(chains, c)}
            </label>
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor={id.token}>Token</label>
          <input id={id.token} required value={token} onChange={(e) => setToken(e.target.value)} />
        </div>
        <div className="grid2">
          <div className="field">
            <label htmlFor={id.min}>Minimum (USD)</label>
            <input id={id.min} inputMode="decimal" required value={min} onChange={(e) => setMin(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={id.max}>Maximum (USD)</label>
            <input id={id.max} inputMode="decimal" required value={max} onChange={(e) => setMax(e.target.value)} />
          </div>
        </div>
      </fieldset>
      <dl className="fields">
        <dt>Backend wallet</dt>
        <dd>
          <code className="wrap">{cfg.backendWalletAddress || "—"}</code>
        </dd>
        <dt>Current limits</dt>
        <dd>
          {formatCents(cfg.minAmountInCents)} to {formatCents(cfg.maxAmountInCents)}
        </dd>
        <dt>Updated</dt>
        <dd>{formatDate(cfg.updatedAt)}</dd>
      </dl>
      <ErrorMessage error={error} />
      {writable ? (
        <button type="submit" className="button" disabled={busy}>
          Save withdrawal settings
        </button>
      ) : null}
    </form>
  );
}
