// The access token lives in this module's memory only — never in localStorage, sessionStorage
// or a cookie readable by script — so a page reload forgets it and the session is resumed by
// POST /v1/auth/refresh (the refresh token is an HttpOnly cookie the script never sees).
let accessToken: string | null = null;
let onUnauthorized: (() => void) | null = null;

export function setAccessToken(token: string | null): void {
  accessToken = token;
}

export function getAccessToken(): string | null {
  return accessToken;
}

// The session registers what a 401 from the API should do (try a refresh, else sign out).
export function setUnauthorizedHandler(fn: (() => void) | null): void {
  onUnauthorized = fn;
}

export function notifyUnauthorized(): void {
  onUnauthorized?.();
}
