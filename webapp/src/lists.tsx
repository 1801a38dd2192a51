// The list pages' shared pieces (payments, withdrawals, refunds, approvals): the filter bar's
// controls, filter state that sends the pager back to the first page, the paged table with its
// empty state, and the cells a withdrawal's or refund's row shows.
import { useState, type ReactNode } from "react";
import type { Schemas } from "./api/client";
import { waiting, type Approval } from "./approvals";
import { shortId } from "./format";
import { href } from "./router";
import { Loaded, PagedTable, StatusBadge, type Column, type Load } from "./ui";

export type ListFilters<F> = {
  filters: F;
  // setFilter changes one filter and applyFilters all of them; either goes back to the first page.
  setFilter: <K extends keyof F>(key: K, value: F[K]) => void;
  applyFilters: (next: F) => void;
  offset: number;
  setOffset: (offset: number) => void;
};

// useListFilters: a list's filters and the offset of the page shown; a changed filter shows the
// first page of what it selects.
export function useListFilters<F extends object>(initial: F | (() => F)): ListFilters<F> {
  const [filters, setFilters] = useState<F>(initial);
  const [offset, setOffset] = useState(0);
  return {
    filters,
    setFilter: (key, value) => {
      setFilters((f) => ({ ...f, [key]: value }));
      setOffset(0);
    },
    applyFilters: (next) => {
      setFilters(next);
      setOffset(0);
    },
    offset,
    setOffset,
  };
}

// StatusFilter: a "Status" select of the given statuses, with "All" (the value "") first.
export function StatusFilter<S extends string>({
  id,
  statuses,
  value,
  onChange,
}: {
  id: string;
  statuses: readonly S[];
  value: S | "";
  onChange: (status: S | "") => void;
}) {
  return (
    <div className="field inline">
      <label htmlFor={id}>Status</label>
      <select id={id} value={value} onChange={(e) => onChange(statuses.find((s) => s === e.target.value) ?? "")}>
        <option value="">All</option>
        {statuses.map((s) => (
          <option key={s} value={s}>
            {s.replace(/_/g, " ")}
          </option>
        ))}
      </select>
    </div>
  );
}

export function AwaitingApprovalCheckbox({ id, checked, onChange }: { id: string; checked: boolean; onChange: (checked: boolean) => void }) {
  return (
    <label className="check" htmlFor={id}>
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.target.checked)} />
      Awaiting approval only
    </label>
  );
}

// IdFilter: a text field for an id, with a hint for screen readers (its element's id is the
// field's followed by "h").
export function IdFilter({ id, label, hint, value, onChange }: { id: string; label: string; hint: string; value: string; onChange: (value: string) => void }) {
  return (
    <div className="field inline">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        className="mono-text id-filter"
        spellCheck={false}
        autoComplete="off"
        value={value}
        aria-describedby={`${id}h`}
        onChange={(e) => onChange(e.target.value)}
      />
      <span className="visually-hidden" id={`${id}h`}>
        {hint}
      </span>
    </div>
  );
}

// PagedList: a list page's loaded page of items as a PagedTable (a row each), or `empty` in a
// card when the page has none.
export function PagedList<L extends { data: readonly unknown[]; pagination: Schemas["Pagination"] }>({
  state,
  columns,
  page,
  offset,
  onOffset,
  empty,
  row,
}: {
  state: Load<L>;
  columns: Column[];
  page: number;
  offset: number;
  onOffset: (offset: number) => void;
  empty: ReactNode;
  row: (item: L["data"][number]) => ReactNode;
}) {
  return (
    <Loaded state={state}>
      {(l) =>
        l.data.length === 0 ? (
          <p className="card muted">{empty}</p>
        ) : (
          <PagedTable columns={columns} pagination={l.pagination} offset={offset} page={page} onOffset={onOffset}>
            {l.data.map((x) => row(x))}
          </PagedTable>
        )
      }
    </Loaded>
  );
}

// IdCell: an item's short id linking to its page (#/<page>/<id>), named by label for screen readers.
export function IdCell({ page, id, label }: { page: string; id: string; label: string }) {
  return (
    <td>
      <a href={href(page, id)} aria-label={label}>
        <code>{shortId(id)}</code>
      </a>
    </td>
  );
}

// StatusCell: a withdrawal's or refund's status, and "needs approval" while it waits for one.
export function StatusCell({ status, approval }: { status: string; approval: Approval | undefined }) {
  return (
    <td>
      <StatusBadge status={status} />
      {waiting(approval, status) ? <span className="badge status-awaiting">needs approval</span> : null}
    </td>
  );
}
