// The fair-share limits (GET /operator/limits): per key the limit, slots in use, tasks queued and waits. The server
// lists its named limits; other keys (a principal's, a task's) are read when the operator names them here.
import { useEffect, useState } from "react";
import { api, formatDuration, type LimitRow } from "./api.ts";

export function Limits() {
  const [draft, setDraft] = useState("");
  const [asked, setAsked] = useState("");
  const [answer, setAnswer] = useState<{ limiter: "on" | "off"; limits: LimitRow[] } | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    const query = new URLSearchParams();
    for (const key of asked.split(/[\s,]+/).filter(Boolean)) query.append("key", key);
    api<NonNullable<typeof answer>>(`/limits${query.size > 0 ? `?${query}` : ""}`).then(
      (found) => (setAnswer(found), setError(undefined)),
      (failure: Error) => setError(failure.message),
    );
  }, [asked]);
  return (
    <>
      <h1>Limits</h1>
      <form
        className="filters panel"
        aria-label="Limit keys"
        onSubmit={(event) => {
          event.preventDefault();
          setAsked(draft);
        }}
      >
        <div className="field">
          <label htmlFor="l-keys">Also read keys</label>
          <input
            id="l-keys"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            placeholder="principal:alice task:crawl"
          />
        </div>
        <div className="buttons">
          <button type="submit">Read</button>
        </div>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {answer && (
        <section className="panel" aria-labelledby="limits-heading">
          <h2 id="limits-heading">
            {answer.limiter === "off" ? "No TaskLimiter is bound: no limits apply" : "Slots and queues per key"}
          </h2>
          <div className="scroll" role="region" aria-label="Limits table" tabIndex={0}>
            <table data-testid="limits-table">
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Limit</th>
                  <th scope="col">In use</th>
                  <th scope="col">Queued</th>
                  <th scope="col">Waits</th>
                  <th scope="col">Oldest wait</th>
                  <th scope="col">Rate window</th>
                  <th scope="col">Rate waiting</th>
                </tr>
              </thead>
              <tbody>
                {answer.limits.map((row) => (
                  <tr key={row.key} data-key={row.key}>
                    <td className="id">{row.key}</td>
                    <td>{row.limit ?? "—"}</td>
                    <td>{row.inUse}</td>
                    <td>{row.queued}</td>
                    <td>{row.waits}</td>
                    <td>{formatDuration(row.oldestWaitMs)}</td>
                    <td>{row.windowCount ?? "—"}</td>
                    <td>{row.rateWaiting}</td>
                  </tr>
                ))}
                {answer.limits.length === 0 && (
                  <tr>
                    <td colSpan={8}>
                      {answer.limiter === "off"
                        ? "Bind a TaskLimiter (durableMcp's limits option) to see limits here."
                        : "No limit is declared: name a key above to read it."}
                    </td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
        </section>
      )}
    </>
  );
}
