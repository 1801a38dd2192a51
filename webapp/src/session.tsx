// The signed-in session: the access token (memory only, api/token.ts), who is signed in
// (GET /v1/auth/me), the merchant being looked at and the mode. On load the session is resumed
// with POST /v1/auth/refresh (HttpOnly cookie); the token is refreshed a minute before it
// expires, and once more on a 401 before giving up and showing the sign-in page.
import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import * as auth from "./api/auth";
import { setAccessToken, setUnauthorizedHandler } from "./api/token";

export interface Session {
  kind: "person" | "pasted";
  expiresAt: number | null; // ms since the epoch
  email: string | null;
  mode: auth.Mode;
  memberships: auth.Membership[];
  me: auth.Me | null; // a person's account (second factors); null for a pasted token
}

type State =
  | { status: "loading" }
  | { status: "signed_out"; notice: string | null }
  | { status: "signed_in"; session: Session };

interface SessionApi {
  state: State;
  merchantId: string | null;
  membership: auth.Membership | null;
  setMerchantId: (id: string) => void;
  can: (p: auth.Permission) => boolean;
  signedIn: (r: auth.AuthResult) => Promise<void>;
  usePastedToken: (token: string) => void;
  signOut: () => Promise<void>;
  switchMode: (mode: auth.Mode) => Promise<void>;
  stepUp: (code: string) => Promise<void>;
  // tokenFrom takes a fresh access token from a step-up or a passkey step-up.
  tokenFrom: (r: auth.AuthResult) => void;
  // reloadMe reads GET /v1/auth/me again (after a second factor was added or removed).
  reloadMe: () => Promise<void>;
}

const Ctx = createContext<SessionApi | null>(null);

// The merchant last looked at is a preference, not a secret: kept across reloads.
const MERCHANT_KEY = "paymentsd.dashboard.merchant";

function readStored(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

function writeStored(key: string, value: string): void {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // storage disabled: the choice lasts for this page only
  }
}

function expiry(r: auth.AuthResult): number | null {
  if (!r.expiresAt) return null;
  const t = Date.parse(r.expiresAt);
  return Number.isNaN(t) ? null : t;
}

async function sessionFrom(r: auth.AuthResult): Promise<Session> {
  if (r.status !== "signed_in" || !r.accessToken) throw new Error("The server did not sign you in.");
  setAccessToken(r.accessToken);
  const me = await auth.me();
  return { kind: "person", expiresAt: expiry(r), email: me.email, mode: me.mode, memberships: me.memberships, me };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<State>({ status: "loading" });
  const [merchantId, setMerchantIdState] = useState<string | null>(readStored(MERCHANT_KEY));
  const refreshing = useRef<Promise<boolean> | null>(null);

  const signedOut = useCallback((notice: string | null) => {
    setAccessToken(null);
    setState({ status: "signed_out", notice });
  }, []);

  // One refresh at a time; concurrent 401s share it.
  const tryRefresh = useCallback((mode?: auth.Mode): Promise<boolean> => {
    if (refreshing.current) return refreshing.current;
    const p = auth
      .refresh(mode)
      .then(sessionFrom)
      .then((session) => {
        setState({ status: "signed_in", session });
        return true;
      })
      .catch(() => false)
      .finally(() => {
        refreshing.current = null;
      });
    refreshing.current = p;
    return p;
  }, []);

  // Resume on load.
  useEffect(() => {
    void tryRefresh().then((ok) => {
      if (!ok) signedOut(null);
    });
  }, [tryRefresh, signedOut]);

  // A 401 from the API: one refresh (person sessions), else back to the sign-in page.
  useEffect(() => {
    setUnauthorizedHandler(() => {
      if (state.status !== "signed_in") return;
      if (state.session.kind === "pasted") {
        signedOut("The access token was refused (expired or revoked). Sign in again.");
        return;
      }
      void tryRefresh().then((ok) => {
        if (!ok) signedOut("Your session has ended. Sign in again.");
      });
    });
    return () => setUnauthorizedHandler(null);
  }, [state, tryRefresh, signedOut]);

  // Refresh a minute before the access token expires (a pasted token cannot be refreshed).
  useEffect(() => {
    if (state.status !== "signed_in" || state.session.expiresAt === null) return;
    const { kind, expiresAt } = state.session;
    const lead = kind === "person" ? 60_000 : 0;
    const wait = Math.max(5_000, expiresAt - Date.now() - lead);
    const t = window.setTimeout(() => {
      if (kind === "pasted") {
        signedOut("The access token has expired. Sign in again.");
        return;
      }
      void tryRefresh().then((ok) => {
        if (!ok) signedOut("Your session has ended. Sign in again.");
      });
    }, Math.min(wait, 2_147_000_000));
    return () => window.clearTimeout(t);
  }, [state, tryRefresh, signedOut]);

  const session = state.status === "signed_in" ? state.session : null;
  const memberships = session?.memberships ?? [];
  const membership = memberships.find((m) => m.merchantId === merchantId) ?? memberships[0] ?? null;

  const api = useMemo<SessionApi>(
    () => ({
      state,
      merchantId: membership?.merchantId ?? null,
      membership,
      setMerchantId: (id: string) => {
        writeStored(MERCHANT_KEY, id);
        setMerchantIdState(id);
      },
      can: (p) => membership?.permissions.includes(p) ?? false,
      signedIn: async (r) => {
        setState({ status: "signed_in", session: await sessionFrom(r) });
      },
      usePastedToken: (token) => {
        const claims = auth.readTokenClaims(token);
        if (claims.merchantIds.length === 0) throw new Error("The token names no merchant (claim merchant_ids).");
        if (claims.expiresAt !== null && claims.expiresAt <= Date.now()) throw new Error("The token has expired.");
        const role: auth.Role = claims.role ?? (claims.scope.split(" ").includes("write") ? "admin" : "viewer");
        setAccessToken(token);
        setState({
          status: "signed_in",
          session: {
            kind: "pasted",
            expiresAt: claims.expiresAt,
            email: null,
            mode: claims.mode,
            me: null,
            memberships: claims.merchantIds.map((id) => ({
              merchantId: id,
              merchantName: id,
              role,
              permissions: auth.ROLE_PERMISSIONS[role],
            })),
          },
        });
      },
      signOut: async () => {
        if (session?.kind === "person") {
          try {
            await auth.logout();
          } catch {
            // signed out locally either way; the refresh cookie expires on its own
          }
        }
        signedOut("You are signed out.");
      },
      stepUp: async (code) => {
        if (session?.kind !== "person") throw new Error("Sign in with your account (not an access token) to confirm this action.");
        const r = await auth.stepUp(code);
        if (r.status !== "signed_in" || !r.accessToken) throw new Error("The code was not accepted.");
        setAccessToken(r.accessToken);
        setState({ status: "signed_in", session: { ...session, expiresAt: expiry(r) } });
      },
      tokenFrom: (r) => {
        if (session?.kind !== "person" || r.status !== "signed_in" || !r.accessToken) return;
        setAccessToken(r.accessToken);
        setState({ status: "signed_in", session: { ...session, expiresAt: expiry(r) } });
      },
      reloadMe: async () => {
        if (session?.kind !== "person") return;
        const me = await auth.me();
        setState({ status: "signed_in", session: { ...session, email: me.email, mode: me.mode, memberships: me.memberships, me } });
      },
      switchMode: async (mode) => {
        if (session?.kind !== "person") return;
        const ok = await tryRefresh(mode);
        if (!ok) throw new Error(`Could not switch to ${mode} mode.`);
      },
    }),
    [state, membership, session, signedOut, tryRefresh],
  );
  return <Ctx.Provider value={api}>{children}</Ctx.Provider>;
}

export function useSession(): SessionApi {
  const s = useContext(Ctx);
  if (!s) throw new Error("useSession outside SessionProvider");
  return s;
}

// useMerchant is for pages shown only when signed in with a merchant selected.
export function useMerchant(): { merchantId: string; mode: auth.Mode; can: (p: auth.Permission) => boolean } {
  const s = useSession();
  if (s.state.status !== "signed_in" || !s.merchantId) throw new Error("no merchant selected");
  return { merchantId: s.merchantId, mode: s.state.session.mode, can: s.can };
}
