// The sign-in API (/v1/auth/*, tag `auth`): every call goes through the openapi-fetch client
// typed by the generated schema, so a change of the contract is a compile error here.
import { api, ApiError, unwrap, type Schemas } from "./client";

export type AuthResult = Schemas["AuthResult"];
export type Me = Schemas["Me"];
export type Membership = Me["memberships"][number];
export type Mode = Schemas["Mode"];
export type Role = Membership["role"];
export type SecondFactorMethod = NonNullable<AuthResult["methods"]>[number];
// The permission names of the contract (domain/permissions.go); the API sends them as strings
// in Me.memberships[].permissions.
export type Permission =
  | "payments:read"
  | "withdrawals:read"
  | "withdrawals:write"
  | "settings:read"
  | "settings:write"
  | "developers:read"
  | "developers:write"
  | "team:read"
  | "team:write"
  | "security:write"
  | "audit:read";

export function login(email: string, password: string): Promise<AuthResult> {
  return unwrap(api.POST("/v1/auth/login", { body: { email, password } }));
}

export function loginSecondFactor(challengeToken: string, code: string): Promise<AuthResult> {
  return unwrap(api.POST("/v1/auth/login/second-factor", { body: { challengeToken, code } }));
}

// refresh uses the HttpOnly refresh cookie; mode, when given, asks for a token of that mode.
export function refresh(mode?: Mode): Promise<AuthResult> {
  return unwrap(api.POST("/v1/auth/refresh", { body: mode ? { mode } : {} }));
}

// stepUp exchanges a fresh second factor for an access token whose second factor is recent
// (operations marked x-second-factor: recent — new keys, withdrawals — need one).
export function stepUp(code: string): Promise<AuthResult> {
  return unwrap(api.POST("/v1/auth/step-up", { body: { code } }));
}

export function providers(): Promise<Schemas["AuthProviders"]> {
  return unwrap(api.GET("/v1/auth/providers"));
}

export function acceptInvitation(token: string, password?: string): Promise<AuthResult> {
  return unwrap(api.POST("/v1/auth/invitations/accept", { body: password ? { token, password } : { token } }));
}

export async function logout(): Promise<void> {
  await unwrap(api.POST("/v1/auth/logout"));
}

export function me(): Promise<Me> {
  return unwrap(api.GET("/v1/auth/me"));
}

// An operation marked x-second-factor: recent answers 403 step_up_required when the session's
// second factor is not recent; 403 second_factor_required when the merchant requires a second
// factor the person has not set up (no step-up helps: Settings → Security does).
export function isStepUpRequired(e: unknown): boolean {
  return e instanceof ApiError && e.status === 403 && e.code === "step_up_required";
}

export function isSecondFactorMissing(e: unknown): boolean {
  return e instanceof ApiError && e.status === 403 && e.code === "second_factor_required";
}

// authErrorText says what went wrong in a sign-in step in words a person can act on.
// step: "code" when the person just gave a second factor (the server answers one
// invalid_credentials for a wrong email, password, code or challenge).
export function authErrorText(e: unknown, step: "password" | "code" = "password"): string {
  if (e instanceof ApiError) {
    switch (e.code) {
      case "invalid_credentials":
        if (step === "code") return "The code is wrong, expired or already used. Try again, or go back and sign in again.";
        return e.param === "currentPassword" ? "The current password is not right." : "The email or password is not right.";
      case "invalid_code":
        return "The code is wrong, expired or already used.";
      case "too_many_attempts": {
        const mins = e.retryAfter !== undefined ? Math.max(1, Math.ceil(e.retryAfter / 60)) : null;
        return mins === null
          ? "Too many failed attempts. Try again later."
          : `Too many failed attempts. Try again in ${mins} minute${mins === 1 ? "" : "s"}.`;
      }
      case "second_factor_required":
        return "This needs two-factor authentication, which your account does not have yet: set it up in Settings → Security.";
      default:
        return e.message;
    }
  }
  if (e instanceof Error) return e.message;
  return "Something went wrong.";
}

// The OIDC callback's refusals (GET /v1/auth/oidc/callback → #/sign-in?error=CODE).
export function oidcErrorText(code: string): string {
  switch (code) {
    case "invalid_state":
      return "The sign-in with your provider expired or was started in another browser. Try again.";
    case "provider_error":
      return "Your identity provider refused the sign-in.";
    case "provider_unavailable":
      return "Your identity provider could not be reached. Try again later.";
    case "invalid_token":
      return "Your identity provider's answer could not be verified.";
    case "email_unverified":
      return "Your identity provider has not verified your email address.";
    case "unknown_user":
      return "No account has this email address. Ask an owner of your team to invite you.";
    default:
      return "The sign-in with your identity provider did not work.";
  }
}

// ---------------------------------------------------------------------------------------------
// A pasted access token (`paymentsd tokens issue`, or an OpenID Connect provider's token) — for
// deployments without accounts and for operators. Its claims are read without verifying the
// signature: the server verifies every request; this only picks the merchants and mode to show.
// ---------------------------------------------------------------------------------------------
export interface PastedToken {
  expiresAt: number | null;
  mode: Mode;
  merchantIds: string[];
  scope: string;
  role: Role | null;
}

function b64urlDecode(s: string): string {
  const b64 = s.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(s.length / 4) * 4, "=");
  const bin = atob(b64);
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

const ROLES: readonly Role[] = ["viewer", "developer", "admin", "owner"];

export function readTokenClaims(token: string, merchantClaim = "merchant_ids"): PastedToken {
  const part = token.split(".")[1];
  if (!part) throw new Error("This is not a JWT (three dot-separated parts).");
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(b64urlDecode(part)) as Record<string, unknown>;
  } catch {
    throw new Error("The token's claims could not be read.");
  }
  const raw = claims[merchantClaim];
  const merchantIds = Array.isArray(raw) ? raw.filter((x): x is string => typeof x === "string") : typeof raw === "string" ? [raw] : [];
  const mode: Mode = claims["mode"] === "live" ? "live" : "test";
  const exp = typeof claims["exp"] === "number" ? claims["exp"] * 1000 : null;
  const scope = typeof claims["scope"] === "string" ? claims["scope"] : "";
  const rc = claims["role"];
  const role = typeof rc === "string" && (ROLES as readonly string[]).includes(rc) ? (rc as Role) : null;
  return { expiresAt: exp, mode, merchantIds, scope, role };
}

// A service token's role: its `role` claim, else the old scopes (write = admin, read = viewer).
export const ROLE_PERMISSIONS: Record<Role, Permission[]> = {
  viewer: ["payments:read", "withdrawals:read", "settings:read", "team:read", "audit:read"],
  developer: ["payments:read", "withdrawals:read", "settings:read", "team:read", "audit:read", "developers:read", "developers:write"],
  admin: [
    "payments:read", "withdrawals:read", "withdrawals:write", "settings:read", "settings:write",
    "developers:read", "developers:write", "team:read", "audit:read",
  ],
  owner: [
    "payments:read", "withdrawals:read", "withdrawals:write", "settings:read", "settings:write",
    "developers:read", "developers:write", "team:read", "team:write", "security:write", "audit:read",
  ],
};
