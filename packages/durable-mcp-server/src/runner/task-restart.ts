import type { FilesSettings } from "../files/file-service.js";
import { decodePack, encodePack, type PackedStep } from "../steps/packed-steps.js";
import { SPILLED_PREFIX, stepLabel } from "../steps/step-record.js";
import { MAX_TASK_RESTARTS } from "../limits.js";
import { toBase64Url } from "../util/encoding.js";
import type { LinkedRestart, TaskLinks } from "./task-links.js";
import { FINAL_STATUSES, type NewTask, type TaskRecord, type TaskStore } from "./task-store.js";

// Restart from a step, and retry, as a NEW task (design/operations.md, "Restart and retry"). A final task stays as it
// is (the first ending wins); its runner plans the new task (planRestart: the id, the journal before the cut, the
// links) and the new task's runner takes that seed in one storage transaction (seedTask). Rules:
// - The cut is by journal order at the step labelled `name#n` (`name` for the first use): every step journaled before
//   it is kept as it was, that step and every later one are dropped; a row whose packed steps straddle the cut keeps
//   the packed steps before it only. Every kept step must have settled (done or failed).
// - Events consumed by dropped steps are gone (the new task's inbox starts empty: an event was sent to the original
//   and is not delivered twice); so are webhook deliveries and input answers of dropped steps: the re-run steps wait
//   again, on the new task's own webhook URLs, and ask again.
// - Spilled results of kept steps are copied under the new task's prefix (its purge removes only its own); the
//   original's are never touched. Results past the cut are not in the new task's view at all.
// - The new task has a new step-key salt: a re-run `do` step gets a new idempotency key (it is a new attempt at its
//   effect, not a repeat of the original's); kept steps keep the keys they journaled.

/** What an operator asks for: a restart from `fromStep`, or a retry (null: no journal kept). */
export interface RestartRequest {
  fromStep: string | null;
  /** Keys the new task's id: the same key gives the same new task (a retried request); null: the next one. */
  requestKey: string | null;
}

/** One journal row as the seed carries it: every column but `seq` (the new journal's order is the array's). */
export interface SeedRow extends Record<string, SqlStorageValue> {
  name: string;
  occurrence: number;
  kind: string;
  state: string;
  attempts: number;
  result: string | null;
  error: string | null;
  wake_at: number | null;
  request: string | null;
  updated_at: number;
  started_at: number | null;
  idempotency_key: string | null;
  attempt_started_at: number | null;
  pack: string | null;
}

interface AttemptRow extends Record<string, SqlStorageValue> {
  name: string;
  occurrence: number;
  slot: number;
  n: number;
  started_at: number;
  ended_at: number | null;
  error: string | null;
}

/** Everything the new task's runner needs, as its original's runner planned it. */
export interface RestartSeed {
  task: NewTask;
  links: TaskLinks;
  rows: SeedRow[];
  attempts: AttemptRow[];
}

export type RestartRefusal = "not_final" | "unknown_step" | "unsettled_step" | "too_many_restarts";
export type RestartPlan = { seed: RestartSeed } | { refused: RestartRefusal; message: string };

interface PlanSite {
  readonly env: unknown;
  readonly storage: DurableObjectStorage;
  readonly store: TaskStore;
}

/** The original's side: refuses, or returns the seed (its link written first, spilled results copied). */
export async function planRestart(
  site: PlanSite,
  files: FilesSettings | undefined,
  record: TaskRecord,
  request: RestartRequest,
): Promise<RestartPlan> {
  const verb = request.fromStep === null ? "retried" : "restarted";
  if (!FINAL_STATUSES.has(record.status)) {
    return {
      refused: "not_final",
      message: `task ${record.taskId} is ${record.status}: only a final task can be ${verb} (cancel it first)`,
    };
  }
  const cut = request.fromStep === null ? { rows: [] } : cutJournal(site.storage.sql, request.fromStep);
  if ("refused" in cut) return { ...cut, message: `task ${record.taskId}: ${cut.message}` };
  const entry = await linkEntry(site.store, record, request);
  if (entry === null) {
    return {
      refused: "too_many_restarts",
      message: `task ${record.taskId} was restarted or retried ${MAX_TASK_RESTARTS} times already: restart one of those`,
    };
  }
  const newTaskId = entry.taskId;
  const rows = await copySpilled(site.env, files, record.taskId, newTaskId, cut.rows);
  const attempts = attemptsOf(site.storage.sql, rows);
  const links: TaskLinks =
    request.fromStep === null
      ? { retriedFrom: { taskId: record.taskId } }
      : { restartedFrom: { taskId: record.taskId, fromStep: request.fromStep } };
  const task: NewTask = {
    taskId: newTaskId,
    principal: record.principal,
    tool: record.tool,
    input: record.input,
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
    origin: record.origin,
    clientCapabilities: record.clientCapabilities,
  };
  return { seed: { task, links, rows, attempts } };
}

/** The original's side, once the new task holds its seed: its link is shown from now on. */
export function confirmRestart(store: TaskStore, record: TaskRecord, newTaskId: string): boolean {
  const restarts = record.links?.restarts ?? [];
  const entry = restarts.find((made) => made.taskId === newTaskId);
  if (!entry) return false;
  if (!entry.seeded) {
    store.setLinks({
      ...record.links,
      restarts: restarts.map((made) => (made === entry ? { ...made, seeded: true } : made)),
    });
  }
  return true;
}

/** The request's entry in the original's links: found again (same key, or a seeding that never finished), or new. */
async function linkEntry(store: TaskStore, record: TaskRecord, request: RestartRequest): Promise<LinkedRestart | null> {
  const matches = (made: LinkedRestart) =>
    made.fromStep === request.fromStep &&
    (request.requestKey !== null ? made.key === request.requestKey : !made.seeded);
  const found = record.links?.restarts?.find(matches);
  if (found) return found;
  if ((record.links?.restarts?.length ?? 0) >= MAX_TASK_RESTARTS) return null;
  const key = request.requestKey ?? `#${(record.links?.restarts?.length ?? 0) + 1}`;
  const taskId = await restartTaskId(record.taskId, request.fromStep, key);
  // Read again after the await: another request may have linked its restart meanwhile.
  const latest = store.read() ?? record;
  const restarts = latest.links?.restarts ?? [];
  const again = restarts.find(matches);
  if (again) return again;
  if (restarts.length >= MAX_TASK_RESTARTS) return null;
  const made: LinkedRestart = { taskId, fromStep: request.fromStep, at: Date.now(), key, seeded: false };
  store.setLinks({ ...latest.links, restarts: [...restarts, made] });
  return made;
}

/** The new task's id: derived from the original, the step and the request key (same shape as newTaskId). */
async function restartTaskId(original: string, fromStep: string | null, key: string): Promise<string> {
  const text = `restart\u0000${original}\u0000${fromStep ?? ""}\u0000${key}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return toBase64Url(new Uint8Array(digest).slice(0, 24));
}

const SEED_COLUMNS = `name, occurrence, kind, state, attempts, result, error, wake_at, request, updated_at, started_at,
  idempotency_key, attempt_started_at, pack`;

/** The journal's rows before the step labelled `fromStep`, the row straddling it cut; or why there is no such cut. */
function cutJournal(
  sql: SqlStorage,
  fromStep: string,
): { rows: SeedRow[] } | { refused: RestartRefusal; message: string } {
  const kept: SeedRow[] = [];
  const labels: string[] = [];
  for (const row of sql.exec<SeedRow>(`SELECT ${SEED_COLUMNS} FROM steps ORDER BY seq`)) {
    if (row.kind !== "patch" && stepLabel(row.name, row.occurrence) === fromStep) return settled(kept, fromStep);
    labels.push(stepLabel(row.name, row.occurrence));
    if (row.pack === null) {
      kept.push(row);
      continue;
    }
    const packed = decodePack(row.pack);
    const at = packed.findIndex(([name, occurrence]) => stepLabel(name, occurrence) === fromStep);
    if (at >= 0) {
      // The packed rows split at the cut: the steps packed before it stay in this row.
      kept.push({ ...row, pack: at === 0 ? null : encodePack(packed.slice(0, at) as PackedStep[]) });
      return settled(kept, fromStep);
    }
    kept.push(row);
    for (const [name, occurrence] of packed) labels.push(stepLabel(name, occurrence));
  }
  const known = labels.slice(0, 20).join(", ") + (labels.length > 20 ? ", …" : "");
  return {
    refused: "unknown_step",
    message: `its journal has no step "${fromStep}" (steps are named name#n from the second use; it has: ${known || "no steps"})`,
  };
}

function settled(
  rows: SeedRow[],
  fromStep: string,
): { rows: SeedRow[] } | { refused: RestartRefusal; message: string } {
  const open = rows.find((row) => row.state === "running" || row.state === "waiting");
  if (!open) return { rows };
  return {
    refused: "unsettled_step",
    message: `step "${stepLabel(open.name, open.occurrence)}" before "${fromStep}" never settled (${open.state}): restart from it or an earlier step`,
  };
}

/** Spilled results of kept steps, copied under the new task's prefix (the original's stay where they are). */
async function copySpilled(
  env: unknown,
  files: FilesSettings | undefined,
  original: string,
  newTaskId: string,
  rows: SeedRow[],
): Promise<SeedRow[]> {
  const from = `${SPILLED_PREFIX}results/${original}/`;
  const bucket = () => {
    const found = files && ((env as Record<string, unknown>)[files.bucketBinding] as R2Bucket | undefined);
    if (!found) throw new Error(`task ${original} has spilled step results but no files bucket is configured`);
    return found;
  };
  const copy = async (stored: string | null): Promise<string | null> => {
    if (stored === null || !stored.startsWith(from)) return stored;
    const key = stored.slice(SPILLED_PREFIX.length);
    const target = `results/${newTaskId}/${stored.slice(from.length)}`;
    const object = await bucket().get(key);
    if (!object) throw new Error(`spilled step result ${key} is missing from the bucket`);
    await bucket().put(target, await object.text(), { httpMetadata: { contentType: "application/json" } });
    return `${SPILLED_PREFIX}${target}`;
  };
  const out: SeedRow[] = [];
  for (const row of rows) {
    let pack = row.pack;
    if (pack !== null && pack.includes(from)) {
      const packed: PackedStep[] = [];
      for (const step of decodePack(pack))
        packed.push([step[0], step[1], await copy(step[2]), ...step.slice(3)] as PackedStep);
      pack = encodePack(packed);
    }
    out.push({ ...row, result: await copy(row.result), pack });
  }
  return out;
}

function attemptsOf(sql: SqlStorage, rows: SeedRow[]): AttemptRow[] {
  const kept = new Set(rows.filter((row) => row.kind === "do").map((row) => `${row.occurrence}:${row.name}`));
  if (kept.size === 0) return [];
  return sql
    .exec<AttemptRow>("SELECT name, occurrence, slot, n, started_at, ended_at, error FROM step_attempts")
    .toArray()
    .filter((row) => kept.has(`${row.occurrence}:${row.name}`));
}

/** Calls the hook after each seeded row: a test's crash point (SEED_CHECKPOINT); a no-op as deployed. */
export type SeedCheckpoint = (rowsWritten: number, seed: RestartSeed) => void;

/** A TaskRunner method a test subclass defines to fail part-way through a seeding (test/fixtures). */
export const SEED_CHECKPOINT: unique symbol = Symbol("durable-mcp-server.seedCheckpoint");

/** The new task's side: the record and its seeded journal, in one transaction (all of it or nothing). */
export function seedTask(
  storage: DurableObjectStorage,
  store: TaskStore,
  seed: RestartSeed,
  now: number,
  checkpoint: SeedCheckpoint,
): void {
  storage.transactionSync(() => {
    store.insert(seed.task, now, seed.links);
    let written = 0;
    for (const row of seed.rows) {
      storage.sql.exec(
        `INSERT INTO steps (${SEED_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        row.name,
        row.occurrence,
        row.kind,
        row.state,
        row.attempts,
        row.result,
        row.error,
        row.wake_at,
        row.request,
        row.updated_at,
        row.started_at,
        row.idempotency_key,
        row.attempt_started_at,
        row.pack,
      );
      checkpoint(++written, seed);
    }
    for (const attempt of seed.attempts) {
      storage.sql.exec(
        `INSERT INTO step_attempts (name, occurrence, slot, n, started_at, ended_at, error) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        attempt.name,
        attempt.occurrence,
        attempt.slot,
        attempt.n,
        attempt.started_at,
        attempt.ended_at,
        attempt.error,
      );
    }
  });
  // A failed transaction leaves nothing; either way the kept row is read again.
  store.forget();
}

/** Whether the task this object holds is the one `seed` would make (a retried seeding joins it). */
export function sameSeed(existing: TaskRecord, seed: RestartSeed): boolean {
  const from = existing.links?.restartedFrom ?? existing.links?.retriedFrom;
  const wanted = seed.links.restartedFrom ?? seed.links.retriedFrom;
  return (
    existing.principal === seed.task.principal &&
    existing.tool === seed.task.tool &&
    existing.input === seed.task.input &&
    JSON.stringify(from) === JSON.stringify(wanted)
  );
}
