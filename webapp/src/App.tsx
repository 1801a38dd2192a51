import { useEffect, useId, useRef, useState, type ReactNode, type RefObject } from "react";
import { AddressBook } from "./pages/AddressBook";
import { ApiKeys } from "./pages/ApiKeys";
import { Approvals } from "./pages/Approvals";
import { AuditLog } from "./pages/AuditLog";
import { Branding } from "./pages/Branding";
import { PaymentDetail, PaymentList } from "./pages/Payments";
import { Security } from "./pages/Security";
import { Team } from "./pages/Team";
import { Overview } from "./pages/Overview";
import { PayoutSettings } from "./pages/PayoutSettings";
import { RefundDetail, RefundList } from "./pages/Refunds";
import { SettingsPayments } from "./pages/SettingsPayments";
import { SettingsWithdrawals } from "./pages/SettingsWithdrawals";
import { AcceptInvitation, SignIn } from "./pages/SignIn";
import { Webhooks } from "./pages/Webhooks";
import { NewWithdrawal, WithdrawalDetail, WithdrawalList } from "./pages/Withdrawals";
import { href, useRoute } from "./router";
import type { Permission } from "./api/auth";
import { useSession } from "./session";
import { applyTheme, nextTheme, storedTheme, type Theme } from "./theme";
import { ErrorMessage, errorText, PageHeader, Placeholder } from "./ui";

export function App() {
  const s = useSession();
  const route = useRoute();
  if (route[0] === "accept-invitation" && s.state.status !== "loading") return <AcceptInvitation />;
  if (s.state.status === "loading") {
    return (
      <main className="signin" id="main">
        <p role="status">Loading…</p>
      </main>
    );
  }
  if (s.state.status === "signed_out") return <SignIn notice={s.state.notice} />;
  return <Shell />;
}

interface NavItem {
  label: string;
  need?: Permission; // shown only with this permission
  path: string[];
  children?: NavItem[];
}

const NAV: NavItem[] = [
  { label: "Overview", path: ["overview"] },
  { label: "Payments", path: ["payments"], need: "payments:read" },
  { label: "Withdrawals", path: ["withdrawals"], need: "withdrawals:read" },
  { label: "Refunds", path: ["refunds"], need: "payments:read" },
  { label: "Approvals", path: ["approvals"], need: "withdrawals:read" },
  {
    label: "Settings",
    path: ["settings"],
    children: [
      {
        label: "Developers",
        path: ["settings", "developers"],
        need: "developers:read",
        children: [
          { label: "API Keys", path: ["settings", "developers", "api-keys"] },
          { label: "Webhooks", path: ["settings", "developers", "webhooks"] },
        ],
      },
      // Not "Payments"/"Withdrawals": the main pages have those names.
      { label: "Payment settings", path: ["settings", "payments"], need: "settings:read" },
      { label: "Withdrawal settings", path: ["settings", "withdrawals"], need: "settings:read" },
      { label: "Payout settings", path: ["settings", "payout"], need: "settings:read" },
      { label: "Address book", path: ["settings", "address-book"], need: "settings:read" },
      { label: "Branding", path: ["settings", "branding"], need: "settings:read" },
      { label: "Team", path: ["settings", "team"], need: "team:read" },
      { label: "Security", path: ["settings", "security"] },
    ],
  },
  { label: "Audit log", path: ["audit-log"], need: "audit:read" },
];

function startsWith(route: string[], prefix: string[]): boolean {
  return prefix.every((p, i) => route[i] === p);
}

function NavList({ items, route, onPick, can }: { items: NavItem[]; route: string[]; onPick: () => void; can: (p: Permission) => boolean }) {
  return (
    <ul>
      {items.filter((it) => !it.need || can(it.need)).map((it) => {
        const exact = it.path.length === route.length && startsWith(route, it.path);
        const within = startsWith(route, it.path);
        return (
          <li key={it.path.join("/")}>
            <a
              href={href(...it.path)}
              aria-current={exact ? "page" : undefined}
              className={within ? "active" : undefined}
              onClick={onPick}
            >
              {it.label}
            </a>
            {it.children ? <NavList items={it.children} route={route} onPick={onPick} can={can} /> : null}
          </li>
        );
      })}
    </ul>
  );
}

function Shell() {
  const s = useSession();
  const raw = useRoute();
  const route = raw.length === 0 || raw[0] === "sign-in" ? ["overview"] : raw;
  const [menuOpen, setMenuOpen] = useState(false);
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const [modeError, setModeError] = useState<string | null>(null);
  const mainRef = useRef<HTMLElement>(null);
  const merchantSel = useId();
  if (s.state.status !== "signed_in") return null;
  const session = s.state.session;
  const routeKey = route.join("/");

  return (
    <div className="shell">
      <a className="skip" href="#main" onClick={(e) => {
        e.preventDefault();
        mainRef.current?.focus();
      }}>
        Skip to content
      </a>
      <header className="topbar">
        <button
          type="button"
          className="button secondary menu-button"
          aria-expanded={menuOpen}
          aria-controls="sidenav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <a className="brand" href={href("overview")}>
          paymentsd
        </a>
        <div className="topbar-controls">
          {session.memberships.length > 0 ? (
            <div className="field inline">
              <label htmlFor={merchantSel}>Merchant</label>
              <select id={merchantSel} value={s.merchantId ?? ""} onChange={(e) => s.setMerchantId(e.target.value)}>
                {session.memberships.map((m) => (
                  <option key={m.merchantId} value={m.merchantId}>
                    {m.merchantName} ({m.role})
                  </option>
                ))}
              </select>
            </div>
          ) : null}
          <ModeIndicator mode={session.mode} canSwitch={session.kind === "person"} onSwitch={(m) => {
            setModeError(null);
            s.switchMode(m).catch((e: unknown) => setModeError(errorText(e)));
          }} />
          <button
            type="button"
            className="button secondary"
            title="Colour theme: system (follows the device), light or dark"
            onClick={() => {
              const t = nextTheme(theme);
              applyTheme(t);
              setTheme(t);
            }}
          >
            Theme: {theme}
          </button>
          <button type="button" className="button secondary" onClick={() => void s.signOut()}>
            Sign out{session.email ? <span className="visually-hidden"> ({session.email})</span> : null}
          </button>
        </div>
      </header>
      {session.mode === "live" ? null : (
        <p className="test-banner" role="note">
          Test mode: test money on testnets and the devnet. Nothing here moves live funds.
        </p>
      )}
      <ErrorMessage error={modeError} />
      <div className="layout">
        <nav id="sidenav" className={menuOpen ? "sidenav open" : "sidenav"} aria-label="Main">
          <NavList items={NAV} route={route} onPick={() => setMenuOpen(false)} can={s.can} />
        </nav>
        <main id="main" ref={mainRef} tabIndex={-1}>
          {s.merchantId ? (
            <RouteFocus routeKey={routeKey} target={mainRef}>
              <Page route={route} />
            </RouteFocus>
          ) : (
            <Placeholder title="No merchant" coming="Your account is not a member of any merchant yet.">
              <p>Ask an owner of a merchant to invite you.</p>
            </Placeholder>
          )}
        </main>
      </div>
    </div>
  );
}

// Moves focus to <main> when the page changes, so screen readers announce the new page.
function RouteFocus({ routeKey, target, children }: { routeKey: string; target: RefObject<HTMLElement | null>; children: ReactNode }) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    target.current?.focus();
  }, [routeKey, target]);
  return <>{children}</>;
}

function ModeIndicator({ mode, canSwitch, onSwitch }: { mode: "test" | "live"; canSwitch: boolean; onSwitch: (m: "test" | "live") => void }) {
  const other = mode === "live" ? "test" : "live";
  return (
    <span className="mode">
      <span className={`badge mode-${mode}`}>{mode === "live" ? "Live mode" : "Test mode"}</span>
      {canSwitch ? (
        <button type="button" className="button secondary" onClick={() => onSwitch(other)}>
          Switch to {other}
        </button>
      ) : null}
    </span>
  );
}

function Page({ route }: { route: string[] }) {
  const [a, b, c] = route;
  switch (a) {
    case "overview":
      return <Overview />;
    case "payments":
      if (b) return <PaymentDetail id={b} />;
      return <PaymentList />;
    case "withdrawals":
      if (b === "new") return <NewWithdrawal />;
      if (b) return <WithdrawalDetail id={b} />;
      return <WithdrawalList />;
    case "refunds":
      if (b) return <RefundDetail id={b} />;
      return <RefundList />;
    case "approvals":
      return <Approvals />;
    case "settings":
      return <Settings section={b} sub={c} />;
    case "audit-log":
      return <AuditLog />;
    default:
      return (
        <>
          <PageHeader title="Not found" />
          <p>
            There is no such page. <a href={href("overview")}>Go to the overview</a>.
          </p>
        </>
      );
  }
}

function Settings({ section, sub }: { section: string | undefined; sub: string | undefined }) {
  switch (section) {
    case "developers":
      if (sub === "webhooks") return <Webhooks />;
      if (sub === "api-keys") return <ApiKeys />;
      return <SettingsIndex only="developers" />;
    case "payments":
      return <SettingsPayments />;
    case "withdrawals":
      return <SettingsWithdrawals />;
    case "payout":
      return <PayoutSettings />;
    case "address-book":
      return <AddressBook />;
    case "branding":
      return <Branding />;
    case "team":
      return <Team />;
    case "security":
      return <Security />;
    default:
      return <SettingsIndex only={null} />;
  }
}

function SettingsIndex({ only }: { only: "developers" | null }) {
  const { can } = useSession();
  const settings = NAV.find((n) => n.path[0] === "settings");
  const items = (settings?.children ?? []).filter((n) => (only === null || n.path[1] === only) && (!n.need || can(n.need)));
  const flat = items.flatMap((n) => (n.children ? n.children : [n]));
  return (
    <>
      <PageHeader title={only === "developers" ? "Developers" : "Settings"} />
      <ul className="link-grid">
        {flat.map((n) => (
          <li key={n.path.join("/")}>
            <a className="card link-card" href={href(...n.path)}>
              {n.label}
            </a>
          </li>
        ))}
      </ul>
    </>
  );
}
