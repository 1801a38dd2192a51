import { useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { formatDate } from "../format";
import { useMerchant } from "../session";
import { useStepUp } from "../stepup";
import { ACTIONS, ConfirmButton, DataTable, ErrorMessage, errorText, Loaded, PageHeader, SecretOnce, useLoad } from "../ui";

// Settings → Developers → API Keys: list, create (the key is in the create answer only, shown
// once with a Copy button), revoke after a confirmation.
export function ApiKeys() {
  const { merchantId, mode, can } = useMerchant();
  const [keys, reload] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/api-keys", { params: { path: { merchantId } }, signal })),
    [merchantId, mode],
  );
  const [created, setCreated] = useState<Schemas["CreatedApiKey"] | null>(null);
  const [newMode, setNewMode] = useState<Schemas["Mode"]>("test");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const modeId = useId();
  const writable = can("developers:write");
  // A live key withdraws through the secret-key API, so only a role that may move money (admin
  // and up: withdrawals:write) makes one; a developer makes test keys (the server refuses too).
  const liveKeys = can("withdrawals:write");
  const { guard, prompt } = useStepUp();

  return (
    <>
      <PageHeader title="API Keys" />
      <p className="help">
        Secret keys authenticate your server to the secret-key API. Only a hash is stored: a key is shown once, when it is made.
      </p>
      {created ? (
        <SecretOnce title={`New ${created.key.mode} secret key`} secret={created.secretKey} onDone={() => setCreated(null)} />
      ) : null}
      {prompt}
      {writable ? (
        <form
          className="card row"
          onSubmit={(e) => {
            e.preventDefault();
            setBusy(true);
            setError(null);
            guard(() => unwrap(api.POST("/v1/merchants/{merchantId}/api-keys", { params: { path: { merchantId } }, body: { mode: newMode } })))
              .then((k) => {
                setCreated(k);
                reload();
              })
              .catch((err: unknown) => setError(errorText(err)))
              .finally(() => setBusy(false));
          }}
        >
          <div className="field inline">
            <label htmlFor={modeId}>Key mode</label>
            <select id={modeId} value={newMode} onChange={(e) => setNewMode(e.target.value as Schemas["Mode"])}>
              <option value="test">test</option>
              {mode === "live" && liveKeys ? <option value="live">live</option> : null}
            </select>
          </div>
          <button type="submit" className="button" disabled={busy}>
            {busy ? "Creating…" : "Create secret key"}
          </button>
          <ErrorMessage error={error} />
        </form>
      ) : null}
      <Loaded state={keys}>
        {(l) =>
          l.data.length === 0 ? (
            <p className="card muted">No keys yet.</p>
          ) : (
            <DataTable className="table-wrap card" columns={["Key", "Mode", "Created", "Made by", "Status", ACTIONS]}>
              {l.data.map((k) => (
                <tr key={k.id}>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.mode}</td>
                  <td>{formatDate(k.createdAt)}</td>
                  <td>{k.createdBy ?? <span className="muted">not a person</span>}</td>
                  <td>{k.revokedAt ? `revoked ${formatDate(k.revokedAt)}` : "active"}</td>
                  <td>
                    {!k.revokedAt && writable ? (
                      <ConfirmButton
                        label="Revoke"
                        ariaLabel={`Revoke key ${k.prefix}…`}
                        confirmLabel={`Revoke ${k.prefix}…`}
                        question="Revoke this key? Requests made with it stop working within a minute."
                        onConfirm={async () => {
                          await unwrap(api.DELETE("/v1/merchants/{merchantId}/api-keys/{keyId}", { params: { path: { merchantId, keyId: k.id } } }));
                          reload();
                        }}
                      />
                    ) : null}
                  </td>
                </tr>
              ))}
            </DataTable>
          )
        }
      </Loaded>
    </>
  );
}
