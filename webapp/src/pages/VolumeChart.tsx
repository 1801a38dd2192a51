import type { Schemas } from "../api/client";
import { formatCents } from "../format";

type Day = Schemas["MerchantOverview"]["volume30d"][number];

// The last 30 days' completed volume as bars, drawn by React as inline SVG (no chart library):
// role="img" with a summary for screen readers, and the same numbers in a visually hidden table.
export function VolumeChart({ days }: { days: Day[] }) {
  const W = 600;
  const H = 160;
  const pad = 4;
  const max = Math.max(1, ...days.map((d) => d.amountInCents));
  const total = days.reduce((a, d) => a + d.amountInCents, 0);
  const count = days.reduce((a, d) => a + d.count, 0);
  const best = days.reduce<Day | null>((a, d) => (a === null || d.amountInCents > a.amountInCents ? d : a), null);
  const bw = days.length > 0 ? W / days.length : W;
  const summary =
    `Volume over the last ${days.length} days: ${formatCents(total)} in ${count} payment${count === 1 ? "" : "s"}` +
    (best && best.amountInCents > 0 ? `; the highest day was ${best.date} with ${formatCents(best.amountInCents)}.` : ".");
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary} preserveAspectRatio="none" className="chart-svg">
        <line x1={0} y1={H - 0.5} x2={W} y2={H - 0.5} className="chart-axis" />
        {days.map((d, i) => {
          const h = d.amountInCents === 0 ? 0 : Math.max(2, ((H - pad) * d.amountInCents) / max);
          return (
            <rect key={d.date} x={i * bw + 1} y={H - h} width={Math.max(1, bw - 2)} height={h} className="chart-bar">
              <title>{`${d.date}: ${formatCents(d.amountInCents)} (${d.count})`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption className="help">
        {formatCents(total)} in {count} payment{count === 1 ? "" : "s"}
        {days.length > 0 ? `, ${days[0]?.date ?? ""} to ${days[days.length - 1]?.date ?? ""}` : ""}.
      </figcaption>
      <table className="visually-hidden">
        <caption>Daily volume</caption>
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Volume</th>
            <th scope="col">Payments</th>
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr key={d.date}>
              <td>{d.date}</td>
              <td>{formatCents(d.amountInCents)}</td>
              <td>{d.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
