// The fleet: filters over the catalog, counts by status × tool, charts per tool, one page of tasks at a time, and
// actions on the selected tasks or on every live task the filter matches (each behind a confirmation with its count).
import { useCallback, useEffect, useMemo, useState } from "react";
import {
  actionLabel,
  api,
  appliesTo,
  formatDuration,
  formatTime,
  STATUSES,
  type OperatorInfo,
  type TaskRow,
} from "./api.ts";
import { BulkActions } from "./BulkActions.tsx";
import { Charts } from "./Charts.tsx";
import { StatusBadge } from "./StatusBadge.tsx";

export interface Filters {
  status: string;
  tool: string;
  principal: string;
  tag: string;
  q: string;
  since: string;
}

const EMPTY: Filters = { status: "", tool: "", principal: "", tag: "", q: "", since: "" };
const PAGE_SIZE = 25;

/** The filter as the operator API's fields (query parameters, or a bulk action's where). */
export function whereOf(filters: Filters): Record<string, string> {
  const where: Record<string, string> = {};
  if (filters.status) where.status = filters.status;
  if (filters.tool.trim()) where.tool = filters.tool.trim();
  if (filters.principal.trim()) where.principal = filters.principal.trim();
  if (filters.tag.trim()) where.tag = filters.tag.trim();
  if (filters.q.trim()) where.q = filters.q.trim();
  if (filters.since) where.createdAfter = filters.since;
  return where;
}

export function Fleet({ info }: { info: OperatorInfo }) {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const [page, setPage] = useState<{ tasks: TaskRow[]; nextCursor: string | null } | undefined>();
  const [counts, setCounts] = useState<Array<{ status: string; tool: string; count: number }> | undefined>();
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string | undefined>();
  const [version, setVersion] = useState(0);
  const where = useMemo(() => whereOf(filters), [filters]);
  const cursor = cursors.at(-1) ?? null;
  const reload = useCallback(() => setVersion((v) => v + 1), []);

  useEffect(() => {
    let stale = false;
    const query = new URLSearchParams({ ...where, limit: String(PAGE_SIZE) });
    if (cursor) query.set("cursor", cursor);
    Promise.all([
      api<{ tasks: TaskRow[]; nextCursor: string | null }>(`/tasks?${query}`),
      api<{ counts: Array<{ status: string; tool: string; count: number }> }>(`/stats?${new URLSearchParams(where)}`),
    ]).then(
      ([list, stats]) => {
        if (stale) return;
        setPage(list);
        setCounts(stats.counts);
        setError(undefined);
      },
      (failure: Error) => !stale && setError(failure.message),
    );
    return () => {
      stale = true;
    };
  }, [where, cursor, version]);

  const actions = (info.actions ?? ["cancel"]).filter((action) => action !== "restart");
  const rows = page?.tasks ?? [];
  const chosen = rows.filter((row) => selected.has(row.taskId));
  const set = (key: keyof Filters) => (event: { target: { value: string } }) =>
    setDraft((old) => ({ ...old, [key]: event.target.value }));

  return (
    <>
      <h1>Fleet</h1>
      <form
        className="filters panel"
        aria-label="Filter tasks"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
          setCursors([null]);
          setSelected(new Set());
        }}
      >
        <div className="field">
          <label htmlFor="f-status">Status</label>
          <select id="f-status" value={draft.status} onChange={set("status")}>
            <option value="">any</option>
            {STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="f-tool">Tool</label>
          <input id="f-tool" value={draft.tool} onChange={set("tool")} list="tools" />
        </div>
        <datalist id="tools">
          {[...new Set(counts?.map((c) => c.tool))].map((tool) => (
            <option key={tool} value={tool} />
          ))}
        </datalist>
        <div className="field">
          <label htmlFor="f-principal">Principal</label>
          <input id="f-principal" value={draft.principal} onChange={set("principal")} />
        </div>
        <div className="field">
          <label htmlFor="f-tag-key-value">Tag (key=value)</label>
          <input id="f-tag-key-value" value={draft.tag} onChange={set("tag")} placeholder="team=billing" />
        </div>
        <div className="field">
          <label htmlFor="f-text">Text</label>
          <input id="f-text" value={draft.q} onChange={set("q")} placeholder="id or message" />
        </div>
        <div className="field">
          <label htmlFor="f-created">Created</label>
          <select id="f-created" value={draft.since} onChange={set("since")}>
            <option value="">any time</option>
            <option value="1h">last hour</option>
            <option value="24h">last 24 h</option>
            <option value="7d">last 7 days</option>
          </select>
        </div>
        <div className="buttons">
          <button type="submit">Apply</button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setDraft(EMPTY);
              setFilters(EMPTY);
              setCursors([null]);
              setSelected(new Set());
            }}
          >
            Clear
          </button>
        </div>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <Counts counts={counts} />
      <Charts since={filters.since || "24h"} tool={where.tool} />
      <section className="panel" aria-labelledby="tasks-heading">
        <h2 id="tasks-heading">Tasks</h2>
        <BulkActions
          actions={actions}
          chosen={chosen}
          where={where}
          maxBulk={info.limits.maxBulkTasks}
          done={() => {
            setSelected(new Set());
            reload();
          }}
        />
        <div className="scroll" role="region" aria-label="Tasks table" tabIndex={0}>
          <table className="tasks" data-testid="fleet-table">
            <thead>
              <tr>
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="Select all on this page"
                    checked={rows.length > 0 && chosen.length === rows.length}
                    onChange={(event) =>
                      setSelected(event.target.checked ? new Set(rows.map((row) => row.taskId)) : new Set())
                    }
                  />
                </th>
                <th scope="col">Task</th>
                <th scope="col">Tool</th>
                <th scope="col">Status</th>
                <th scope="col">Principal</th>
                <th scope="col">Created</th>
                <th scope="col">Duration</th>
                <th scope="col">Step</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.taskId} data-task={row.taskId} data-status={row.status}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${row.taskId}`}
                      checked={selected.has(row.taskId)}
                      onChange={(event) => {
                        const next = new Set(selected);
                        if (event.target.checked) next.add(row.taskId);
                        else next.delete(row.taskId);
                        setSelected(next);
                      }}
                    />
                  </td>
                  <td className="id">
                    <a href={`#/tasks/${encodeURIComponent(row.taskId)}`}>{row.taskId}</a>
                  </td>
                  <td>{row.tool}</td>
                  <td>
                    <StatusBadge status={row.status} />
                  </td>
                  <td>{row.principal}</td>
                  <td>{formatTime(row.createdAt)}</td>
                  <td>{formatDuration(row.durationMs)}</td>
                  <td>{row.currentStep ?? "—"}</td>
                </tr>
              ))}
              {page && rows.length === 0 && (
                <tr>
                  <td colSpan={8}>No task matches.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            className="secondary"
            disabled={cursors.length === 1}
            onClick={() => setCursors(cursors.slice(0, -1))}
          >
            Previous page
          </button>
          <span className="small">Page {cursors.length}</span>
          <button
            type="button"
            className="secondary"
            disabled={!page?.nextCursor}
            onClick={() => page?.nextCursor && setCursors([...cursors, page.nextCursor])}
          >
            Next page
          </button>
        </nav>
        <p className="small muted">
          Actions this server answers: {actions.map(actionLabel).join(", ") || "none"}
          {chosen.some((row) => !actions.some((action) => appliesTo(action, row.status))) &&
            " (not all apply to every selected task)"}
          .
        </p>
      </section>
    </>
  );
}

function Counts({ counts }: { counts: Array<{ status: string; tool: string; count: number }> | undefined }) {
  if (!counts) return null;
  const tools = [...new Set(counts.map((c) => c.tool))];
  const cell = (tool: string, status: string) => counts.find((c) => c.tool === tool && c.status === status)?.count ?? 0;
  return (
    <section className="panel" aria-labelledby="counts-heading">
      <h2 id="counts-heading">Counts</h2>
      <div className="scroll" role="region" aria-label="Counts by status and tool" tabIndex={0}>
        <table className="counts" data-testid="counts">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              {STATUSES.map((status) => (
                <th scope="col" key={status}>
                  {status}
                </th>
              ))}
              <th scope="col">total</th>
            </tr>
          </thead>
          <tbody>
            {tools.map((tool) => (
              <tr key={tool}>
                <th scope="row">{tool}</th>
                {STATUSES.map((status) => (
                  <td key={status}>{cell(tool, status)}</td>
                ))}
                <td>{STATUSES.reduce((sum, status) => sum + cell(tool, status), 0)}</td>
              </tr>
            ))}
            {tools.length === 0 && (
              <tr>
                <td colSpan={STATUSES.length + 2}>No tasks.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
