// The audit log (GET /operator/audit), newest first, a page at a time (`before` the oldest seq shown).
import { useCallback, useEffect, useState } from "react";
import { api, formatTime, type AuditEntry } from "./api.ts";

const PAGE = 50;

export function Audit() {
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const load = useCallback(async (before?: number) => {
    try {
      const query = new URLSearchParams({ limit: String(PAGE) });
      if (before !== undefined) query.set("before", String(before));
      const answer = await api<{ entries: AuditEntry[] }>(`/audit?${query}`);
      setEntries((old) => (before === undefined ? answer.entries : [...old, ...answer.entries]));
      setMore(answer.entries.length === PAGE);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }, []);
  useEffect(() => void load(), [load]);
  return (
    <>
      <h1>Audit log</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <section className="panel" aria-labelledby="audit-heading">
        <h2 id="audit-heading">Operator actions, newest first</h2>
        <div className="scroll" role="region" aria-label="Audit log table" tabIndex={0}>
          <table data-testid="audit-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Action</th>
                <th scope="col">Target</th>
                <th scope="col">Tasks</th>
                <th scope="col">Outcome</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <tr key={entry.seq} data-action={entry.action}>
                  <td>{formatTime(entry.at)}</td>
                  <td>{entry.actor}</td>
                  <td>{entry.action}</td>
                  <td className="json">{summary(entry.target)}</td>
                  <td>
                    {entry.taskIds.length === 1 ? (
                      <a href={`#/tasks/${encodeURIComponent(entry.taskIds[0]!)}`}>{entry.taskIds[0]}</a>
                    ) : (
                      entry.taskIds.length
                    )}
                  </td>
                  <td className="json">{summary(entry.outcome)}</td>
                </tr>
              ))}
              {entries.length === 0 && (
                <tr>
                  <td colSpan={6}>No operator action yet.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
        {more && (
          <button type="button" className="secondary" onClick={() => void load(entries.at(-1)?.seq)}>
            Older entries
          </button>
        )}
      </section>
    </>
  );
}

function summary(value: Record<string, unknown>): string {
  return Object.entries(value)
    .map(([key, inner]) => `${key}: ${typeof inner === "object" ? JSON.stringify(inner) : String(inner)}`)
    .join(", ");
}
