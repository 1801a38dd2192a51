// Light and dark follow prefers-color-scheme unless the user picked one with the toggle; the
// choice is a data-theme attribute on <html> (no inline style: the CSP allows none).
export type Theme = "system" | "light" | "dark";
const KEY = "paymentsd.dashboard.theme";

export function storedTheme(): Theme {
  try {
    const t = window.localStorage.getItem(KEY);
    return t === "light" || t === "dark" ? t : "system";
  } catch {
    return "system";
  }
}

export function applyTheme(t: Theme): void {
  const root = document.documentElement;
  if (t === "system") root.removeAttribute("data-theme");
  else root.setAttribute("data-theme", t);
  try {
    if (t === "system") window.localStorage.removeItem(KEY);
    else window.localStorage.setItem(KEY, t);
  } catch {
    // storage disabled: the choice lasts for this page only
  }
}

export function nextTheme(t: Theme): Theme {
  return t === "system" ? "light" : t === "light" ? "dark" : "system";
}
