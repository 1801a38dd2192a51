import { useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { useMerchant } from "../session";
import { chainLabel, ErrorMessage, errorText, Loaded, PageHeader, SavedNotice, toggled, useChains, useSettings } from "../ui";

// Settings → Payments: the assets payments are quoted in (GET/PUT …/accepted-assets).
// The default is every served token; choosing a subset pins it (tokens added later are then not
// offered until chosen).
export function SettingsPayments() {
  const { merchantId, mode, can } = useMerchant();
  const chains = useChains();
  const [assets, saved, onSaved] = useSettings(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/accepted-assets", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  return (
    <>
      <PageHeader title="Payment settings" />
      <Loaded state={assets}>
        {(a) => (
          <AssetsForm
            key={JSON.stringify(a)}
            assets={a}
            writable={can("settings:write")}
            chainName={(c) => chainLabel(chains, c)}
            merchantId={merchantId}
            onSaved={onSaved}
          />
        )}
      </Loaded>
      <SavedNotice saved={saved} />
      <section className="card placeholder" aria-labelledby="pp-more">
        <h2 id="pp-more">Checkout branding</h2>
        <p>
          Coming with the merchant profile API: the display name, logo and accent colour of the checkout page (Settings → Branding).
        </p>
      </section>
    </>
  );
}

function AssetsForm({
  assets,
  writable,
  chainName,
  merchantId,
  onSaved,
}: {
  assets: Schemas["AcceptedAssets"];
  writable: boolean;
  chainName: (chainId: string) => string;
  merchantId: string;
  onSaved: () => void;
}) {
  const [chosen, setChosen] = useState<Set<string>>(new Set(assets.assets.map((x) => x.tokenId)));
  const [extra, setExtra] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const extraId = useId();

  function save(body: Schemas["SetAcceptedAssetsRequest"]) {
    setBusy(true);
    setError(null);
    unwrap(api.PUT("/v1/merchants/{merchantId}/accepted-assets", { params: { path: { merchantId } }, body }))
      .then(() => {
        onSaved();
      })
      .catch((e: unknown) => setError(errorText(e)))
      .finally(() => setBusy(false));
  }

  return (
    <form
      className="card"
      onSubmit={(e) => {
        e.preventDefault();
        const list = assets.assets.map((x) => x.tokenId).filter((id) => chosen.has(id));
        const more = extra
          .split(/[\s,]+/)
          .map((s) => s.trim())
          .filter((s) => s !== "");
        const all = [...list, ...more];
        if (all.length === 0) return setError("Choose at least one asset, or accept every served token.");
        save({ assets: all });
      }}
    >
      <fieldset disabled={!writable || busy}>
        <legend>Accepted assets</legend>
        <p className="help">
          {assets.default ? "Every token this deployment serves (the default), in quote order." : "The assets you chose, in quote order."}
        </p>
        {assets.assets.map((x) => (
          <label key={x.tokenId} className="check">
            <input
              type="checkbox"
              checked={chosen.has(x.tokenId)}
              onChange={(e) => setChosen(toggled(chosen, x.tokenId, e.target.checked))}
            />
            {x.symbol} on {chainName(x.chainId)}
          </label>
        ))}
        {assets.unserved.length > 0 ? (
          <p className="warning">
            Chosen but no longer served (no quote is made in them): {assets.unserved.join(", ")}
          </p>
        ) : null}
        <div className="field">
          <label htmlFor={extraId}>Add assets</label>
          <input id={extraId} spellCheck={false} placeholder="eip155:8453/USDC" value={extra} onChange={(e) => setExtra(e.target.value)} aria-describedby={`${extraId}-help`} />
          <p className="help" id={`${extraId}-help`}>
            Token ids (CAIP-19) or chain and symbol, separated by spaces or commas.
          </p>
        </div>
      </fieldset>
      <ErrorMessage error={error} />
      {writable ? (
        <div className="row">
          <button type="submit" className="button" disabled={busy}>
            Save assets
          </button>
          {!assets.default ? (
            <button type="button" className="button secondary" disabled={busy} onClick={() => save({ default: true })}>
              Accept every served token
            </button>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}
