import { useId, useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { formatDate } from "../format";
import { useMerchant } from "../session";
import { useStepUp } from "../stepup";
import { ACTIONS, ConfirmButton, CopyButton, DataTable, ErrorMessage, errorText, Loaded, PageHeader, useLoad } from "../ui";

type Role = Schemas["TeamRole"];
const ROLES: Role[] = ["viewer", "developer", "admin", "owner"];

// Settings → Team: members and their roles, and invitations. Actions show only when the
// person's permissions (GET /v1/auth/me) allow them; the server checks anyway. Every team change
// (invite, change a role, remove, revoke) is `x-second-factor: recent`: it goes through guard(),
// which asks for a step-up on 403 step_up_required and runs it again.
export function Team() {
  const { merchantId, can } = useMerchant();
  const { guard, prompt } = useStepUp();
  const writable = can("team:write");
  const [members, reloadMembers] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/members", { params: { path: { merchantId } }, signal })),
    [merchantId],
  );
  const [invites, reloadInvites] = useLoad(
    (signal) => unwrap(api.GET("/v1/merchants/{merchantId}/invitations", { params: { path: { merchantId } }, signal })),
    [merchantId],
  );
  const [created, setCreated] = useState<Schemas["CreatedInvitation"] | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();

  return (
    <>
      <PageHeader title="Team" />
      {prompt}
      <section className="card" aria-labelledby={`${id}-m`}>
        <h2 id={`${id}-m`}>Members</h2>
        <Loaded state={members}>
          {(l) => (
            <DataTable columns={["Email", "Role", "Second factor", "Joined", writable && ACTIONS]}>
              {l.data.map((m) => (
                <MemberRow key={m.userId} m={m} writable={writable} merchantId={merchantId} reload={reloadMembers} guard={guard} />
              ))}
            </DataTable>
          )}
        </Loaded>
      </section>

      <section className="card" aria-labelledby={`${id}-i`}>
        <h2 id={`${id}-i`}>Invitations</h2>
        {created ? (
          <div className="secret" role="region" aria-labelledby={`${id}-link-h`}>
            <h3 id={`${id}-link-h`}>Invitation for {created.invitation.email}</h3>
            <p>Send this link to them. It is shown only once, works once, and expires {formatDate(created.invitation.expiresAt)}.</p>
            <div className="field">
              <label htmlFor={`${id}-link`}>Invitation link</label>
              <div className="row">
                <input id={`${id}-link`} className="mono" readOnly value={created.inviteUrl} onFocus={(e) => e.target.select()} />
                <CopyButton text={created.inviteUrl} />
              </div>
            </div>
            <button type="button" className="button secondary" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        ) : null}
        {writable ? (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              setBusy(true);
              setError(null);
              guard(() =>
                unwrap(api.POST("/v1/merchants/{merchantId}/invitations", { params: { path: { merchantId } }, body: { email: email.trim(), role } })),
              )
                .then((c) => {
                  setCreated(c);
                  setEmail("");
                  reloadInvites();
                })
                .catch((err: unknown) => setError(errorText(err)))
                .finally(() => setBusy(false));
            }}
          >
            <div className="field inline">
              <label htmlFor={`${id}-email`}>Email</label>
              <input id={`${id}-email`} type="email" required autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />
            </div>
            <div className="field inline">
              <label htmlFor={`${id}-role`}>Role</label>
              <select id={`${id}-role`} value={role} onChange={(e) => setRole(e.target.value as Role)}>
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </div>
            <button type="submit" className="button" disabled={busy}>
              Invite
            </button>
          </form>
        ) : null}
        <ErrorMessage error={error} />
        <Loaded state={invites}>
          {(l) =>
            l.data.length === 0 ? (
              <p className="muted">No pending invitations.</p>
            ) : (
              <DataTable columns={["Email", "Role", "Expires", writable && ACTIONS]}>
                {l.data.map((inv) => (
                  <tr key={inv.id}>
                    <td>{inv.email}</td>
                    <td>{inv.role}</td>
                    <td>{formatDate(inv.expiresAt)}</td>
                    {writable ? (
                      <td>
                        <ConfirmButton
                          label="Revoke invitation"
                          ariaLabel={`Revoke invitation for ${inv.email}`}
                          confirmLabel="Revoke"
                          confirmAriaLabel={`Revoke the invitation for ${inv.email}`}
                          question={`Revoke the invitation for ${inv.email}? Its link stops working.`}
                          onConfirm={async () => {
                            await guard(() =>
                              unwrap(
                                api.DELETE("/v1/merchants/{merchantId}/invitations/{invitationId}", {
                                  params: { path: { merchantId, invitationId: inv.id } },
                                }),
                              ),
                            );
                            reloadInvites();
                          }}
                        />
                      </td>
                    ) : null}
                  </tr>
                ))}
              </DataTable>
            )
          }
        </Loaded>
      </section>
    </>
  );
}

type Guard = ReturnType<typeof useStepUp>["guard"];

function MemberRow({
  m,
  writable,
  merchantId,
  reload,
  guard,
}: {
  m: Schemas["TeamMember"];
  writable: boolean;
  merchantId: string;
  reload: () => void;
  guard: Guard;
}) {
  const [role, setRole] = useState<Role>(m.role);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  return (
    <tr>
      <td>
        {m.email}
        {m.disabled ? <span className="muted"> (disabled)</span> : null}
      </td>
      <td>
        {writable ? (
          <>
            <label htmlFor={id} className="visually-hidden">
              Role of {m.email}
            </label>
            <select id={id} value={role} onChange={(e) => setRole(e.target.value as Role)}>
              {ROLES.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </>
        ) : (
          m.role
        )}
      </td>
      <td>{m.hasSecondFactor ? "Yes" : "No"}</td>
      <td>{formatDate(m.joinedAt)}</td>
      {writable ? (
        <td>
          <div className="row">
            <button
              type="button"
              className="button secondary"
              aria-label={`Save role of ${m.email}`}
              disabled={busy || role === m.role}
              onClick={() => {
                setBusy(true);
                setError(null);
                guard(() =>
                  unwrap(
                    api.PATCH("/v1/merchants/{merchantId}/members/{userId}", { params: { path: { merchantId, userId: m.userId } }, body: { role } }),
                  ),
                )
                  .then(reload)
                  .catch((err: unknown) => setError(errorText(err)))
                  .finally(() => setBusy(false));
              }}
            >
              Save role
            </button>
            <ConfirmButton
              label={`Remove ${m.email}`}
              confirmLabel="Remove"
              confirmAriaLabel={`Remove ${m.email} from the team`}
              question={`Remove ${m.email} from the team?`}
              onConfirm={async () => {
                await guard(() => unwrap(api.DELETE("/v1/merchants/{merchantId}/members/{userId}", { params: { path: { merchantId, userId: m.userId } } })));
                reload();
              }}
            />
          </div>
          <ErrorMessage error={error} />
        </td>
      ) : null}
    </tr>
  );
}
