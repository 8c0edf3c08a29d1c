// The exploration suite's driver: arbitrary programs (fast-check), one run of a program on a fresh ExploreRunner
// with a crash injected, and the checks every run must pass. Used by exploration.test.ts (CI) and the soak
// (`pnpm explore:soak`, soak.explore.ts).
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { newTaskId } from "../../src/ids.js";
import { MAX_STEP_RESULT_BYTES } from "../../src/limits.js";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import type { DetailedTask } from "../../src/wire/task-shapes.js";
import { testTasks } from "../../src/testing/index.js";
import { fixtureEnv, probeFor } from "../helpers.js";
import {
  crashPoints,
  expectedOutcome,
  lastAttemptSteps,
  numbered,
  RETRY_LIMIT,
  show,
  stepCount,
  type Crash,
  type Mutation,
  type Op,
  type Program,
  type ProgramInput,
} from "./program.js";

export type RawOp =
  | { k: "do"; n: string; mode: "ok" | "retry" | "throw" | "nonretry"; ms: number }
  | { k: "sleep" | "event" | "ask" | "fail"; n: string }
  | { k: "wait"; ms: number; replayMs: number }
  | { k: "par"; branches: RawOp[][] };

const letter = fc.constantFrom("a", "b", "c");
const leaf: fc.Arbitrary<RawOp> = fc.oneof(
  {
    arbitrary: fc.record({
      k: fc.constant("do" as const),
      n: letter,
      mode: fc.constantFrom("ok", "ok", "ok", "retry", "throw", "nonretry"),
      ms: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20 })),
    }),
    weight: 6,
  },
  {
    arbitrary: fc.record({ k: fc.constantFrom("sleep" as const, "event" as const, "ask" as const), n: letter }),
    weight: 3,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("wait" as const),
      ms: fc.integer({ min: 0, max: 50 }),
      replayMs: fc.integer({ min: 0, max: 50 }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ k: fc.constant("fail" as const), n: letter }), weight: 1 },
);

const { sequence: rawSequence } = fc.letrec<{ op: RawOp; sequence: RawOp[] }>((tie) => ({
  op: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.record({ k: fc.constant("par" as const), branches: fc.array(tie("sequence"), { minLength: 2, maxLength: 3 }) }),
  ),
  sequence: fc.array(tie("op"), { minLength: 1, maxLength: 4 }),
}));

/**
 * Names every step (branch-scoped: sibling branches never share a name, whose occurrences would follow timing — a
 * handler rule, docs/how-it-works.md rule 2; inside one sequence names repeat), keeps at most one `fail`, numbers ops.
 */
export function finish(raw: RawOp[]): Program {
  let fails = 0;
  const walk = (ops: RawOp[], prefix: string): Op[] =>
    ops.map((op, index): Op => {
      switch (op.k) {
        case "par":
          return { k: "par", id: 0, branches: op.branches.map((branch, j) => walk(branch, `${prefix}${index}.${j}/`)) };
        case "wait":
          return { k: "wait", id: 0, ms: op.ms, replayMs: op.replayMs };
        case "do":
          return { k: "do", id: 0, name: `${prefix}${op.n}`, mode: op.mode, ms: op.ms };
        case "fail":
          if (fails++ > 0) return { k: "do", id: 0, name: `${prefix}${op.n}`, mode: "ok", ms: 0 };
          return { k: "fail", id: 0, name: `${prefix}${op.n}` };
        default:
          return { k: op.k, id: 0, name: `${prefix}${op.n}` };
      }
    });
  return numbered(walk(raw, ""));
}

export const programs: fc.Arbitrary<Program> = rawSequence.map(finish).filter((program) => stepCount(program) <= 14);

/** A program and one crash: at a sampled crash point (abort), or an eviction at a sampled round of the driver. */
export const crashedPrograms: fc.Arbitrary<{ program: Program; crash: Crash }> = programs.chain((program) => {
  const points = crashPoints(program);
  return fc
    .oneof(
      { arbitrary: fc.constantFrom(...points).map((point): Crash => ({ kind: "abort", point })), weight: 4 },
      { arbitrary: fc.integer({ min: 0, max: 6 }).map((round): Crash => ({ kind: "evict", round })), weight: 1 },
    )
    .map((crash) => ({ program, crash }));
});

/**
 * A program that finishes step "m" and then waits (a sleep, before any failure), with the mutation a deploy makes
 * under it meanwhile: "m" renamed, or removed.
 */
export const mutatedPrograms: fc.Arbitrary<{ program: Program; mutation: Mutation; whenWaiting: string }> = fc
  .record({ rest: rawSequence, remove: fc.boolean() })
  .map(({ rest, remove }) => {
    const program = finish([{ k: "do", n: "m", mode: "ok", ms: 0 }, { k: "sleep", n: "m nap" }, ...rest]);
    const without = (ops: Op[]): Op[] =>
      ops.map((op) =>
        op.k === "fail"
          ? { ...op, k: "do", mode: "ok", ms: 0 }
          : op.k === "par"
            ? { ...op, branches: op.branches.map(without) }
            : op,
      );
    const target = program[0]!.id;
    return {
      program: without(program),
      mutation: remove ? { remove: target } : { rename: target },
      whenWaiting: "m nap",
    };
  })
  .filter(({ program }) => stepCount(program) <= 16);

type Runner = DurableObjectStub & TaskRunnerRpc;

export interface RunReport {
  task: DetailedTask;
  /** Completed body runs by step idempotency key. */
  completions: Map<string, number>;
  rows: number;
  largestResult: number;
  rounds: number;
  /** The journal's steps that failed as interrupted on their last attempt, with the attempts their rows count. */
  interrupted: Map<string, number>;
}

const MAX_ROUNDS = 400;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FINAL = new Set(["completed", "failed", "cancelled"]);

/**
 * Runs `program` on a fresh ExploreRunner until it ends: answers its questions, sends its events, makes its sleeps
 * and back-offs due through the testing kit, runs its alarm; `crash` as given. `mutate`: once the task waits with
 * every op before `mutate.after` journaled, the probe's mutation is set (a deploy under the task).
 */
export async function runProgram(
  program: Program,
  crash: Crash,
  mutate?: { mutation: Mutation; whenWaiting: string },
): Promise<RunReport> {
  const namespace = fixtureEnv.EXPLORE_RUNNER;
  const taskId = newTaskId();
  const objectId = namespace.idFromName(taskId).toString();
  const probe = `explore-${taskId}`;
  const access = { taskId, principal: "alice" };
  const stub = () => namespace.get(namespace.idFromName(taskId)) as unknown as Runner;
  const kit = testTasks({ binding: namespace, principal: "alice" });
  const input: ProgramInput = { probe, objectId, program, crash, ...(mutate ? { mutable: true } : {}) };
  await stub().create({
    taskId,
    principal: "alice",
    tool: "program",
    input: JSON.stringify(input),
    ttlMs: 600_000,
    pollIntervalMs: 100,
  });
  let task: DetailedTask | null = null;
  let mutated = false;
  let rounds = 0;
  for (; rounds < MAX_ROUNDS; rounds++) {
    try {
      task = await stub().get(access);
      if (!task) throw new Error(`task ${taskId} is gone`);
      if (FINAL.has(task.status)) break;
      if (crash.kind === "evict" && crash.round === rounds) await evictDurableObject(stub());
      const waiting = await runInDurableObject(stub(), (_, state) =>
        state.storage.sql
          .exec<{ name: string; kind: string; request: string | null; wake_at: number | null }>(
            "SELECT name, kind, request, wake_at FROM steps WHERE state = 'waiting'",
          )
          .toArray(),
      );
      if (mutate && !mutated && waiting.some((row) => row.name === mutate.whenWaiting)) {
        await probeFor(probe).set("mutation", mutate.mutation);
        mutated = true;
        await evictDurableObject(stub());
      }
      for (const key of Object.keys(task.inputRequests ?? {})) {
        const name = key.replace(/#\d+$/, "");
        await stub().update(access, { [key]: { action: "accept", content: { name } } });
      }
      for (const row of waiting.filter((waited) => waited.kind === "event")) {
        const { type } = JSON.parse(row.request!) as { type: string };
        await stub().sendEvent(taskId, { type, payload: JSON.stringify({ name: row.name }) }, "alice");
      }
      const onClock = waiting.some((row) => (row.kind === "sleep" || row.kind === "do") && row.wake_at !== null);
      if (onClock && (!mutate || mutated)) await kit.task(taskId).wake();
      else await runDurableObjectAlarm(stub());
      // runDurableObjectAlarm (the kit's wake too) removes the alarm before running it, so an alarm run that a crash
      // aborted is not retried as the platform retries a failed alarm: do it here. A live task always has an alarm
      // otherwise (its TTL at least).
      await runInDurableObject(stub(), async (instance, state) => {
        if ((await state.storage.getAlarm()) !== null) return;
        await (instance as unknown as { alarm(info: AlarmInvocationInfo): Promise<void> }).alarm({
          retryCount: 1,
          isRetry: true,
          scheduledTime: Date.now(),
        });
      });
    } catch {
      // The object was aborted or evicted under a call: look again.
    }
    await pause(rounds < 20 ? 2 : 10);
  }
  if (!task || !FINAL.has(task.status)) {
    throw new Error(`did not end within ${MAX_ROUNDS} rounds: ${JSON.stringify(task)?.slice(0, 600)}`);
  }
  const completions = await runInDurableObject(probeFor(probe), async (_, state) => {
    const done = await state.storage.list<number>({ prefix: "done:" });
    return new Map([...done].map(([key, count]) => [key.slice(5), count]));
  });
  // One look at the journal: its size, and the steps that failed as interrupted on their last attempt.
  const { journal, failed } = await runInDurableObject(stub(), (_, state) => ({
    journal: state.storage.sql
      .exec<{ rows: number; largest: number | null }>(
        "SELECT count(*) AS rows, max(length(result)) AS largest FROM steps",
      )
      .one(),
    failed: state.storage.sql
      .exec<{ name: string; attempts: number; error: string }>(
        "SELECT name, attempts, error FROM steps WHERE state = 'failed'",
      )
      .toArray(),
  }));
  const interrupted = new Map(
    failed
      .filter((row) => (JSON.parse(row.error) as { name?: string }).name === "StepInterruptedError")
      .map((row) => [row.name, row.attempts]),
  );
  return { task, completions, rows: journal.rows, largestResult: journal.largest ?? 0, rounds, interrupted };
}

/** Every check of a run of an unchanged `program` with `crash`; throws what failed, with the program. */
export function check(program: Program, crash: Crash, report: RunReport): void {
  const fail = (what: string): never => {
    throw new Error(`${what}\n  program: ${show(program)}\n  crash: ${JSON.stringify(crash)}`);
  };
  const { task } = report;
  // A crash that cuts a step short on its last attempt ends that step interrupted, which a crash-free run cannot
  // (docs/how-it-works.md rule 5): one crash, one such step at most, only a step that uses every attempt, and its row
  // counts them all.
  const crashes = crash.kind === "none" ? 0 : 1;
  if (report.interrupted.size > crashes)
    fail(`${report.interrupted.size} step(s) interrupted with ${crashes} crash(es)`);
  const lastAttempts = lastAttemptSteps(program);
  for (const [name, attempts] of report.interrupted) {
    if (!lastAttempts.has(name)) fail(`step ${name} ended interrupted, though it does not use every attempt`);
    if (attempts !== RETRY_LIMIT + 1) fail(`step ${name} ended interrupted after ${attempts} attempts`);
  }
  const expected = expectedOutcome(program, new Set(report.interrupted.keys()));
  if (task.status !== "completed") fail(`ended ${task.status}: ${JSON.stringify(task.error)}`);
  const result = task.result as { isError?: boolean; content: Array<{ text: string }> };
  if ("threw" in expected) {
    if (result.isError !== true) fail(`expected a tool error at ${expected.threw}, got ${result.content[0]?.text}`);
    if (!result.content[0]?.text.includes(expected.threw))
      fail(`the tool error names another step: ${result.content[0]?.text}`);
  } else {
    if (result.isError === true) fail(`expected a result, got the tool error ${result.content[0]?.text}`);
    const actual = JSON.parse(result.content[0]!.text) as unknown;
    if (JSON.stringify(actual) !== JSON.stringify(expected.returned)) {
      fail(`returned ${JSON.stringify(actual)}, a crash-free run returns ${JSON.stringify(expected.returned)}`);
    }
  }
  for (const [key, count] of report.completions) {
    if (count > 1 + crashes) fail(`a completed body ran ${count} times with ${crashes} crash(es) (key ${key})`);
  }
  if (report.rows > stepCount(program)) fail(`the journal holds ${report.rows} rows for ${stepCount(program)} steps`);
  if (report.largestResult > MAX_STEP_RESULT_BYTES) fail(`a journal row holds ${report.largestResult} bytes`);
}
