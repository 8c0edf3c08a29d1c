import { OUTBOX_BASE_DELAY_MS, OUTBOX_MAX_DELAY_MS } from "../limits.js";
import type { TaskEventSink } from "../task-events.js";
import { backoffDelayMs } from "../util/backoff.js";
import type { CancelBody, NoticeBody } from "./child-shapes.js";

/** What the outbox calls on another task's runner (a part of TaskRunnerRpc). */
interface OutboxPeer {
  childFinished(notice: NoticeBody): Promise<"recorded" | "gone">;
  cancel(access: CancelBody): Promise<boolean>;
}

// What a task owes other tasks once it is final (schema v13, `outbox`): a child's notice of its final state to its
// parent, and a parent's cancel of each child whose policy is "cancel". Each row is written in the same synchronous
// turn as the final state that owes it (TaskRun.finish), so the two commit together; the row goes once the other task
// acknowledged it, and until then the task's alarm retries it with backoff (TaskRun.arm). A parent or child that is
// gone (purged, never created) acknowledges as gone: the row is dropped and logged.

type OutboxRow =
  | { seq: number; target: string; kind: "notice"; body: NoticeBody; attempts: number }
  | { seq: number; target: string; kind: "cancel"; body: CancelBody; attempts: number };

export class Outbox {
  constructor(private readonly sql: SqlStorage) {}

  add(target: string, kind: "notice", body: NoticeBody, now: number): void;
  add(target: string, kind: "cancel", body: CancelBody, now: number): void;
  add(target: string, kind: "notice" | "cancel", body: NoticeBody | CancelBody, now: number): void {
    this.sql.exec(
      "INSERT INTO outbox (target, kind, body, next_at) VALUES (?, ?, ?, ?)",
      target,
      kind,
      JSON.stringify(body),
      now,
    );
  }

  /** The rows due by `now`, oldest first. */
  due(now: number): OutboxRow[] {
    return this.sql
      .exec<{ seq: number; target: string; kind: string; body: string; attempts: number }>(
        "SELECT seq, target, kind, body, attempts FROM outbox WHERE next_at <= ? ORDER BY seq",
        now,
      )
      .toArray()
      .map((row) => ({ ...row, body: JSON.parse(row.body) }) as OutboxRow);
  }

  /** When the next row is due, or null when the outbox is empty. */
  nextAt(): number | null {
    return this.sql.exec<{ next: number | null }>("SELECT MIN(next_at) AS next FROM outbox").one().next;
  }

  remove(seq: number): void {
    this.sql.exec("DELETE FROM outbox WHERE seq = ?", seq);
  }

  /** The row's delivery failed: tried again after a backoff that grows with its attempts. */
  retry(seq: number, attempts: number, now: number): void {
    const delay = Math.min(OUTBOX_MAX_DELAY_MS, backoffDelayMs("exponential", OUTBOX_BASE_DELAY_MS, attempts + 1));
    this.sql.exec("UPDATE outbox SET attempts = ?, next_at = ? WHERE seq = ?", attempts + 1, now + delay, seq);
  }
}

/**
 * Delivers the rows due now to their tasks' runners in `namespace`, all at once: each acknowledged row goes, each
 * failed one is put off (Outbox.retry). Never throws: what failed is retried by the next alarm.
 */
export async function deliverOutbox(
  outbox: Outbox,
  namespace: DurableObjectNamespace,
  event: TaskEventSink,
): Promise<void> {
  const rows = outbox.due(Date.now());
  if (rows.length === 0) return;
  await Promise.all(
    rows.map(async (row) => {
      const runner = namespace.get(namespace.idFromName(row.target)) as unknown as OutboxPeer;
      try {
        if (row.kind === "notice") {
          const answer = await runner.childFinished(row.body);
          if (answer === "gone") event("child_notice_dropped", { parentTaskId: row.target, reason: "parent gone" });
        } else if (!(await runner.cancel(row.body))) {
          event("child_cancel_dropped", { childTaskId: row.target, reason: "child gone" });
        }
        outbox.remove(row.seq);
      } catch (error) {
        event("outbox_retry", { target: row.target, kind: row.kind, attempts: row.attempts + 1, error: String(error) });
        outbox.retry(row.seq, row.attempts, Date.now());
      }
    }),
  );
}
