// Settings → Address book (issue 23): saved recipients (label, network, address), each usable
// for withdrawals once its cooling-off period ends (`usableAt`); add and remove (settings:write,
// x-second-factor: recent, audited). With "Withdrawals only to saved addresses" on (Payout
// settings), a withdrawal goes only to one of these.
import { useId, useState } from "react";
import { api, unwrap } from "../api/client";
import { formatDate } from "../format";
import { href } from "../router";
import { useMerchant } from "../session";
import { useStepUp } from "../stepup";
import { ACTIONS, chainLabel, ConfirmButton, DataTable, ErrorMessage, errorText, Loaded, PageHeader, useChains, useLoad } from "../ui";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export function AddressBook() {
  const { merchantId, mode, can } = useMerchant();
  const chains = useChains();
  const { guard, prompt } = useStepUp();
  const [book, reload] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/address-book", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  const writable = can("settings:write");
  const now = Date.now();
  return (
    <>
      <PageHeader title="Address book" />
      <p className="help">
        Saved recipients for withdrawals. A new address can receive withdrawals only after the cooling-off period set in{" "}
        <a href={href("settings", "payout")}>the payout settings</a>, so an address slipped in by someone else has time to be noticed.
      </p>
      {prompt}
      {writable ? <AddEntry guard={guard} onAdded={reload} /> : null}
      <Loaded state={book}>
        {(b) =>
          b.data.length === 0 ? (
            <p className="card muted">No saved addresses.</p>
          ) : (
            <DataTable className="table-wrap card" columns={["Label", "Network", "Address", "Usable", "Saved by", writable ? ACTIONS : null]}>
              {b.data.map((e) => {
                const usable = Date.parse(e.usableAt) <= now;
                return (
                  <tr key={e.id}>
                    <td className="wrap">{e.label}</td>
                    <td>{chainLabel(chains, e.chainId)}</td>
                    <td>
                      <code className="wrap">{e.address}</code>
                    </td>
                    <td>{usable ? "now" : `from ${formatDate(e.usableAt)} (cooling off)`}</td>
                    <td className="wrap">
                      {e.createdBy ?? "a service token"}, {formatDate(e.createdAt)}
                    </td>
                    {writable ? (
                      <td>
                        <ConfirmButton
                          label="Remove"
                          ariaLabel={`Remove ${e.label}`}
                          confirmLabel="Yes, remove"
                          confirmAriaLabel={`Yes, remove ${e.label}`}
                          question={`Remove ${e.label}? Withdrawals already made keep their recipient.`}
                          onConfirm={async () => {
                            await guard(() =>
                              unwrap(api.DELETE("/v1/merchants/{merchantId}/address-book/{entryId}", { params: { path: { merchantId, entryId: e.id } } })),
                            );
                            reload();
                          }}
                        />
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </DataTable>
          )
        }
      </Loaded>
    </>
  );
}

function AddEntry({ guard, onAdded }: { guard: <T>(action: () => Promise<T>) => Promise<T>; onAdded: () => void }) {
  const { merchantId, mode } = useMerchant();
  const chains = useChains();
  const [label, setLabel] = useState("");
  const [chainId, setChainId] = useState("");
  const [address, setAddress] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [added, setAdded] = useState<string | null>(null);
  const id = useId();
  // This mode's networks (an address book entry is for one chain).
  const offered = [...chains.values()].filter((c) => c.isEnabled && c.isTestnet === (mode === "test"));
  const selected = chainId || offered[0]?.chainId || "";
  return (
    <form
      className="card"
      aria-labelledby={`${id}-h`}
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        setAdded(null);
        const a = address.trim();
        if (!label.trim()) return setError("Give the address a label, like Treasury Safe.");
        if (!selected) return setError("Choose a network.");
        if (!ADDRESS.test(a)) return setError("The address is 0x followed by 40 hexadecimal characters.");
        setBusy(true);
        guard(() =>
          unwrap(api.POST("/v1/merchants/{merchantId}/address-book", { params: { path: { merchantId } }, body: { label: label.trim(), chainId: selected, address: a } })),
        )
          .then((entry) => {
            setLabel("");
            setAddress("");
            setAdded(`Saved ${entry.label}: usable ${Date.parse(entry.usableAt) <= Date.now() ? "now" : "from " + formatDate(entry.usableAt)}.`);
            onAdded();
          })
          .catch((err: unknown) => setError(errorText(err)))
          .finally(() => setBusy(false));
      }}
    >
      <h2 id={`${id}-h`}>Add an address</h2>
      <div className="grid2">
        <div className="field">
          <label htmlFor={`${id}-l`}>Label</label>
          <input id={`${id}-l`} required maxLength={100} value={label} onChange={(e) => setLabel(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor={`${id}-c`}>Network</label>
          <select id={`${id}-c`} value={selected} onChange={(e) => setChainId(e.target.value)}>
            {offered.map((c) => (
              <option key={c.chainId} value={c.chainId}>
                {chainLabel(chains, c.chainId)}
              </option>
            ))}
          </select>
        </div>
      </div>
      <div className="field">
        <label htmlFor={`${id}-a`}>Address</label>
        <input id={`${id}-a`} className="mono-text" required spellCheck={false} autoComplete="off" value={address} onChange={(e) => setAddress(e.target.value)} />
      </div>
      <ErrorMessage error={error} />
      {added ? (
        <p className="notice" role="status">
          {added}
        </p>
      ) : null}
      <button type="submit" className="button" disabled={busy}>
        {busy ? "Saving…" : "Save address"}
      </button>
    </form>
  );
}
