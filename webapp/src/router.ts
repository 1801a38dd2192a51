// A tiny hash router (#/withdrawals/…). Why the fragment and not the path: the server then
// serves one file, /dashboard/index.html, and needs no rewrite of deep links to it; the
// fragment is never sent to the server nor in a Referer, and a reload keeps the page. The
// route table is small enough that a library would cost more than it saves.
import { useEffect, useState } from "react";

export function currentPath(): string {
  const h = window.location.hash.replace(/^#/, "");
  const path = h.split("?")[0] ?? "";
  return path.startsWith("/") ? path : "/" + path;
}

export function useRoute(): string[] {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const on = () => setPath(currentPath());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return path
    .split("/")
    .filter((s) => s !== "")
    .map((s) => decodeURIComponent(s));
}

export function href(...segments: string[]): string {
  return "#/" + segments.map(encodeURIComponent).join("/");
}

export function navigate(...segments: string[]): void {
  window.location.hash = href(...segments);
}

// The query of the fragment (#/sign-in?challengeToken=…): where the server's redirects (the
// OIDC callback) and links it makes (invitations) put their parameters.
export function currentQuery(): URLSearchParams {
  const h = window.location.hash.replace(/^#/, "");
  const i = h.indexOf("?");
  return new URLSearchParams(i < 0 ? "" : h.slice(i + 1));
}

// replaceRoute changes the fragment without a history entry (drops a one-time query such as a
// challenge token, so Back does not bring it back).
export function replaceRoute(...segments: string[]): void {
  window.history.replaceState(null, "", href(...segments));
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}
