const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" });

export function formatCents(cents: number): string {
  return usd.format(cents / 100);
}

// parseDollars reads "12", "12.3" or "12.34" (no signs, separators or exponents) into cents.
export function parseDollars(text: string): number | null {
  const t = text.trim();
  const m = /^(\d{1,9})(?:\.(\d{1,2}))?$/.exec(t);
  if (!m) return null;
  const whole = Number(m[1]);
  const frac = Number((m[2] ?? "").padEnd(2, "0"));
  return whole * 100 + frac;
}

const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return "—";
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : dateFmt.format(t);
}

export function shortId(id: string): string {
  return id.length > 13 ? id.slice(0, 8) + "…" : id;
}

// formatUnits shows a token amount given in its smallest unit ("1500000", 6 decimals) as a
// decimal ("1.5"), exactly: BigInt-free string arithmetic, no floating point.
export function formatUnits(smallest: string, decimals: number): string {
  if (!/^\d+$/.test(smallest)) return smallest;
  const digits = smallest.replace(/^0+(?=\d)/, "");
  if (decimals <= 0) return digits;
  const s = digits.padStart(decimals + 1, "0");
  const whole = s.slice(0, s.length - decimals);
  const frac = s.slice(s.length - decimals).replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : whole;
}

// parseUnits reads a decimal token amount ("1.5") into its smallest unit ("1500000"); null when
// it is not a plain positive number or has more decimals than the token.
export function parseUnits(text: string, decimals: number): string | null {
  const m = /^(\d{1,40})(?:\.(\d+))?$/.exec(text.trim());
  if (!m) return null;
  const frac = m[2] ?? "";
  if (frac.length > decimals) return null;
  const v = ((m[1] ?? "") + frac.padEnd(decimals, "0")).replace(/^0+/, "");
  return v === "" ? null : v;
}

// excessUnits: a − b of two smallest-unit amounts, or null when b ≥ a (or either is not one).
export function excessUnits(a: string, b: string): string | null {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return null;
  const d = BigInt(a) - BigInt(b);
  return d > 0n ? d.toString() : null;
}
