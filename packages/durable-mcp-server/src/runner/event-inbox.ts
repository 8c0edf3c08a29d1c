import type { EventRefusal } from "../errors/event-errors.js";
import { MAX_BUFFERED_EVENTS, MAX_BUFFERED_EVENTS_PER_TYPE } from "../limits.js";
import type { StoredEvent } from "../steps/engine-host.js";
import { toHex } from "../util/encoding.js";

/** How a TaskRunner answered an event: given to a waiting step, kept for a later wait, or refused. */
export type EventOutcome =
  | { outcome: "delivered"; step: string }
  | { outcome: "buffered" }
  | { refused: EventRefusal; message: string };

/** How a TaskRunner answered a webhook POST: the HTTP status and JSON body the route answers with. */
export interface WebhookAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** The status message of a task whose step waits for an event (docs/api.md): it is `working`, asking nobody. */
export function waitingMessage(label: string, type: string): string {
  return `waiting for event "${type}" (step "${label}")`;
}

/**
 * The event inbox of one task in its TaskRunner's SQLite (schema v7): events sent while no wait of their type was
 * pending, bounded per type and in all (limits.ts), taken oldest first; and the webhook deliveries.
 */
export class EventInbox {
  constructor(private readonly sql: SqlStorage) {}

  /** Removes and returns the oldest buffered event of `type`. */
  take(type: string): StoredEvent | null {
    const row = this.sql
      .exec<{ type: string; payload: string; sent_at: number }>(
        `DELETE FROM event_inbox WHERE seq = (SELECT seq FROM event_inbox WHERE type = ? ORDER BY seq LIMIT 1)
         RETURNING type, payload, sent_at`,
        type,
      )
      .toArray()[0];
    return row ? { type: row.type, payload: row.payload, sentAt: row.sent_at } : null;
  }

  /** Buffers `event`; false (and nothing written) when the bound of its type or of the inbox is reached. */
  add(event: StoredEvent): boolean {
    const { total, same } = this.sql
      .exec<{ total: number; same: number }>(
        "SELECT COUNT(*) AS total, COALESCE(SUM(type = ?), 0) AS same FROM event_inbox",
        event.type,
      )
      .one();
    if (total >= MAX_BUFFERED_EVENTS || same >= MAX_BUFFERED_EVENTS_PER_TYPE) return false;
    this.sql.exec(
      "INSERT INTO event_inbox (type, payload, sent_at) VALUES (?, ?, ?)",
      event.type,
      event.payload,
      event.sentAt,
    );
    return true;
  }

  /** Buffered events by type (for tests and the timeline's readers). */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const row of this.sql
      .exec<{ type: string; n: number }>("SELECT type, COUNT(*) AS n FROM event_inbox GROUP BY type")
      .toArray()) {
      counts[row.type] = row.n;
    }
    return counts;
  }

  /** The body a webhook already accepted (its digest) and the answer it got, if it accepted one. */
  delivery(hookId: string): { sha256: string; answer: WebhookAnswer } | null {
    const row = this.sql
      .exec<{ body_sha256: string; status: number; answer: string }>(
        "SELECT body_sha256, status, answer FROM webhook_deliveries WHERE hook_id = ?",
        hookId,
      )
      .toArray()[0];
    return row
      ? {
          sha256: row.body_sha256,
          answer: { status: row.status, body: JSON.parse(row.answer) as WebhookAnswer["body"] },
        }
      : null;
  }

  recordDelivery(hookId: string, sha256: string, answer: WebhookAnswer, now: number): void {
    this.sql.exec(
      "INSERT INTO webhook_deliveries (hook_id, body_sha256, status, answer, delivered_at) VALUES (?, ?, ?, ?, ?)",
      hookId,
      sha256,
      answer.status,
      JSON.stringify(answer.body),
      now,
    );
  }
}

/** SHA-256 of a text, hex: what makes two webhook bodies "identical". */
export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
