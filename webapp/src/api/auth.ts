// ---------------------------------------------------------------------------------------------
// HAND-WRITTEN TYPES — switch to the generated ones when the auth contract lands.
//
// The auth API (/v1/auth/*, tag `auth`, issue 22 contract.md "Auth helper") is not in
// openapi.yaml yet, so it is not in clients/typescript/src/schema.d.ts. These types mirror the
// plan. TODO(integrator): once `npm run generate` has them, replace AuthResult / Me with
// components["schemas"]["AuthResult"] / ["Me"] and the fetch calls with `api.POST("/v1/auth/…")`
// from ./client (the auth middleware there already adds the bearer token).
// ---------------------------------------------------------------------------------------------
import { ApiError, toApiError } from "./client";
import { getAccessToken } from "./token";

export type Mode = "test" | "live";
export type Role = "viewer" | "developer" | "admin" | "owner";
export type SecondFactorMethod = "totp" | "recovery_code" | "passkey";
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

export interface AuthResult {
  status: "signed_in" | "second_factor_required";
  accessToken?: string;
  expiresAt?: string;
  challengeToken?: string;
  methods?: SecondFactorMethod[];
}

export interface Membership {
  merchantId: string;
  merchantName: string;
  role: Role;
  permissions: string[];
}

export interface Me {
  id: string;
  email: string;
  totpEnabled: boolean;
  passkeyCount: number;
  mode: Mode;
  memberships: Membership[];
}

async function send<T>(method: "GET" | "POST", path: string, body?: unknown, bearer?: string): Promise<T | undefined> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (bearer) headers["Authorization"] = `Bearer ${bearer}`;
  const init: RequestInit = { method, headers, credentials: "same-origin", cache: "no-store" };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await fetch(path, init);
  if (res.status === 204) return undefined;
  let parsed: unknown = undefined;
  try {
    parsed = await res.json();
  } catch {
    parsed = undefined;
  }
  if (!res.ok) {
    const err = toApiError(res.status, parsed);
    const retry = res.headers.get("Retry-After");
    if (retry && res.status === 429) {
      throw new ApiError(429, err.code, `${err.message} Try again in ${retry} s.`);
    }
    throw err;
  }
  return parsed as T;
}

async function sendResult(path: string, body?: unknown): Promise<AuthResult> {
  const r = await send<AuthResult>("POST", path, body);
  if (!r) throw new ApiError(500, "empty_answer", "The server sent no answer.");
  return r;
}

export function login(email: string, password: string): Promise<AuthResult> {
  return sendResult("/v1/auth/login", { email, password });
}

export function loginSecondFactor(challengeToken: string, code: string): Promise<AuthResult> {
  return sendResult("/v1/auth/login/second-factor", { challengeToken, code });
}

// refresh uses the HttpOnly refresh cookie; mode, when given, asks for a token of that mode.
export function refresh(mode?: Mode): Promise<AuthResult> {
  return sendResult("/v1/auth/refresh", mode ? { mode } : undefined);
}

// stepUp exchanges a fresh second factor for an access token whose second factor is recent
// (operations marked x-second-factor: recent — new keys, withdrawals — need one).
export async function stepUp(code: string): Promise<AuthResult> {
  const r = await send<AuthResult>("POST", "/v1/auth/step-up", { code }, getAccessToken() ?? undefined);
  if (!r) throw new ApiError(500, "empty_answer", "The server sent no answer.");
  return r;
}

// The error codes that mean "confirm with your second factor first". TODO(integrator): keep
// only the code the auth API documents for x-second-factor: recent.
export const STEP_UP_CODES: ReadonlySet<string> = new Set(["second_factor_required", "step_up_required", "second_factor_not_recent"]);

export async function logout(): Promise<void> {
  await send<undefined>("POST", "/v1/auth/logout");
}

export async function me(): Promise<Me> {
  const r = await send<Me>("GET", "/v1/auth/me", undefined, getAccessToken() ?? undefined);
  if (!r) throw new ApiError(500, "empty_answer", "The server sent no answer.");
  return r;
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
}

function b64urlDecode(s: string): string {
  const b64 = s.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(s.length / 4) * 4, "=");
  const bin = atob(b64);
  const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

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
  return { expiresAt: exp, mode, merchantIds, scope };
}

// Today's scope-based tokens map to roles as the auth plan says: write = admin, read = viewer.
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
