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
