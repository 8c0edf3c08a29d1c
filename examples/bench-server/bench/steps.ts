// The step engine's rows of the bench (issue 15): per-step overhead at 2,000 and 10,000 steps (each task paired with
// a one-step task), and how long a tasks/get waits while its task's handler runs 10,000 steps. Used by run.ts and,
// with the two floors and nothing else, by `pnpm bench:steps` (steps-run.ts), short enough to repeat interleaved.
import type { McpHttpClient } from "@durable-mcp/test-harness";
import { cpuSeconds } from "./common.ts";
import { resultOf } from "./mcp.ts";
import { median, ms, summarize, table, type Summary } from "./stats.ts";

const now = () => performance.now();

/** Per-step overhead must stay at or under this at 2,000 steps and flat to 10,000 (issue 15). */
export const PER_STEP_TARGET_MS = 0.01;
/** Met only by a figure that is a cost at all: a median below zero says the run's noise exceeded what it measured. */
export const perStepMet = (perStepMs: number) => perStepMs >= 0 && perStepMs <= PER_STEP_TARGET_MS;
/** A tasks/get sent while the handler runs steps must never wait longer than this (issue 15). */
export const GET_WAIT_TARGET_MS = 50;

/** A task started with tools/call and followed to the end on a listen: ms from the call to its completion. */
async function taskMs(client: McpHttpClient, steps: number): Promise<number> {
  const begin = now();
  const taskId = (await client.startTask("bench_steps", { steps, payloadBytes: 0 })).taskId;
  const final = (await client.listenTasks([taskId])).get(taskId)!;
  resultOf(final.task);
  return final.at - begin;
}

export interface PerStepRow {
  steps: number;
  pairs: number;
  oneStepMs: number;
  totalMs: number;
  /** Median over the pairs of (this task − its one-step task) / (steps − 1). */
  perStepMs: number;
  /** The pairs' per-step figures, lowest and highest: the spread within the run. */
  perStepMinMs: number;
  perStepMaxMs: number;
  /**
   * The same pairing on CPU time instead of wall time: median of (workerd CPU during the N-step task − during its
   * one-step task) / (steps − 1), both workerd processes, in clock ticks of 10 ms. Unlike wall time it does not grow
   * when other processes take the machine's cores, so it compares builds on a loaded machine. Absent: not sampled.
   */
  cpuPerStepMs?: number;
}

/** Each N-step task paired with a one-step task run just before it; pairing cancels drift in the machine's load. */
export async function measurePerStep(
  client: McpHttpClient,
  rows: ReadonlyArray<readonly [steps: number, pairs: number]>,
  /** The server's CPU time so far, in ms (cpuMsOf), to pair CPU time as well. */
  cpuMs?: () => number,
): Promise<PerStepRow[]> {
  await taskMs(client, 1);
  const result: PerStepRow[] = [];
  for (const [steps, pairs] of rows) {
    const base: number[] = [];
    const full: number[] = [];
    const perStep: number[] = [];
    const cpuPerStep: number[] = [];
    for (let i = 0; i < pairs; i++) {
      const cpu0 = cpuMs?.() ?? 0;
      const a = await taskMs(client, 1);
      const cpu1 = cpuMs?.() ?? 0;
      const b = await taskMs(client, steps);
      const cpu2 = cpuMs?.() ?? 0;
      base.push(a);
      full.push(b);
      perStep.push((b - a) / (steps - 1));
      cpuPerStep.push((cpu2 - cpu1 - (cpu1 - cpu0)) / (steps - 1));
    }
    result.push({
      steps,
      pairs,
      oneStepMs: median(base),
      totalMs: median(full),
      perStepMs: median(perStep),
      perStepMinMs: Math.min(...perStep),
      perStepMaxMs: Math.max(...perStep),
      ...(cpuMs ? { cpuPerStepMs: median(cpuPerStep) } : {}),
    });
  }
  return result;
}

/** CPU time (user + system) so far of the `workerd` processes among `pids`, in ms, from /proc/<pid>/stat. */
export function cpuMsOf(pids: readonly number[]): () => number {
  return () => pids.reduce((sum, pid) => sum + cpuSeconds(pid) * 1000, 0);
}

export interface GetDuringRun {
  steps: number;
  runs: number;
  /** Every tasks/get answered `working` while a run was under way, over all runs. */
  gets: Summary;
  /** The longest any get took, the first and last of each run included. */
  worstMs: number;
  /**
   * The longest a get took between two others that saw the task working: a wait between steps, not one that
   * may cover the run's start (the alarm, the journal read) or its end (the final commit).
   */
  worstBetweenMs: number;
  /** How many gets saw the task `working` (before yielding existed: none, the first answer was the final one). */
  sawWorking: number;
  /** Every get of every run, in order, ms: the first and the last (the one that saw the task final) included. */
  allMs: number[][];
}

/**
 * Starts a `steps`-step task and sends tasks/get back to back until it is final, `runs` times, timing each get.
 * Before yielding existed, the first get after the run started waited for all of it and saw it completed.
 */
export async function measureGetDuringRun(client: McpHttpClient, steps: number, runs: number): Promise<GetDuringRun> {
  const working: number[] = [];
  let worstMs = 0;
  let worstBetweenMs = 0;
  const allMs: number[][] = [];
  for (let run = 0; run < runs; run++) {
    const taskId = (await client.startTask("bench_steps", { steps, payloadBytes: 0 })).taskId;
    const waits: number[] = [];
    for (;;) {
      const begin = now();
      const task = await client.getTask(taskId);
      waits.push(now() - begin);
      if (task.status !== "working") {
        resultOf(task);
        break;
      }
    }
    allMs.push(waits);
    worstMs = Math.max(worstMs, ...waits);
    if (waits.length > 2) worstBetweenMs = Math.max(worstBetweenMs, ...waits.slice(1, -1));
    working.push(...waits.slice(0, -1));
  }
  return {
    steps,
    runs,
    gets: summarize(working.length > 0 ? working : [worstMs]),
    worstMs,
    worstBetweenMs,
    sawWorking: working.length,
    allMs,
  };
}

/** Parallel tasks must run at least this many steps per second, on the server's clock (issue 15). */
export const PARALLEL_TARGET_STEPS_PER_S = 10_000;

export interface ParallelServerClock {
  tasks: number;
  steps: number;
  runs: number;
  /** Median over the runs of (tasks × steps) / (last task's lastUpdatedAt − first task's createdAt). */
  stepsPerSecond: number;
  minStepsPerSecond: number;
  maxStepsPerSecond: number;
  /** The same runs timed by the client (first tools/call sent → last completion received), for comparison. */
  clientStepsPerSecond: number;
}

/**
 * `tasks` tasks of `steps` steps started at once, `runs` times. Timed on the server's clock, from the tasks' own
 * timestamps: the first task's `createdAt` to the last completed task's `lastUpdatedAt` (whole milliseconds), so
 * the client's own HTTP work and wrangler's proxy count only where they delay the server.
 */
export async function measureParallelServerClock(
  client: McpHttpClient,
  tasks = 20,
  steps = 50,
  runs = 3,
): Promise<ParallelServerClock> {
  const server: number[] = [];
  const wall: number[] = [];
  for (let run = 0; run < runs; run++) {
    const begin = now();
    const ids = await Promise.all(
      Array.from(
        { length: tasks },
        async () => (await client.startTask("bench_steps", { steps, payloadBytes: 0 })).taskId,
      ),
    );
    const finals = [...(await client.listenTasks(ids)).values()];
    for (const final of finals) resultOf(final.task);
    wall.push(Math.max(...finals.map((f) => f.at)) - begin);
    const first = Math.min(...finals.map((f) => Date.parse(f.task.createdAt)));
    const last = Math.max(...finals.map((f) => Date.parse(f.task.lastUpdatedAt)));
    server.push(Math.max(1, last - first));
  }
  const rate = (elapsedMs: number) => (tasks * steps) / (elapsedMs / 1000);
  return {
    tasks,
    steps,
    runs,
    stepsPerSecond: rate(median(server)),
    minStepsPerSecond: rate(Math.max(...server)),
    maxStepsPerSecond: rate(Math.min(...server)),
    clientStepsPerSecond: rate(median(wall)),
  };
}

export interface ParallelJournalClock {
  tasks: number;
  steps: number;
  /** Every run: first step start → last step end across all tasks, from the journal (whole ms), and the client's. */
  runs: Array<{ journalSpanMs: number; stepsPerSecond: number; clientMs: number }>;
  /** Median over the runs. */
  stepsPerSecond: number;
}

/** The step timeline of a finished task (tasks/get with the timeline asked for): its `do` steps' start and end. */
async function stepSpan(client: McpHttpClient, taskId: string): Promise<{ first: number; last: number; n: number }> {
  const task = await client.getTask(taskId, { steps: true });
  const timeline = (task._meta as Record<string, unknown> | undefined)?.["durable-mcp-server/steps"] as
    | { steps: Array<{ kind: string; startedAt: string | null; updatedAt: string }> }
    | undefined;
  const steps = (timeline?.steps ?? []).filter((step) => step.kind === "do");
  const starts = steps.map((step) => Date.parse(step.startedAt ?? step.updatedAt));
  const ends = steps.map((step) => Date.parse(step.updatedAt));
  if (steps.length === 0) throw new Error(`task ${taskId}: no step timeline in its tasks/get`);
  return { first: Math.min(...starts), last: Math.max(...ends), n: steps.length };
}

/**
 * `tasks` tasks of `steps` steps started at once, `runs` times, on one defined clock: from the first step's start
 * to the last step's end across all the tasks, as their journals recorded them (the step timeline's startedAt and
 * updatedAt, the Durable Objects' Date.now(), whole milliseconds). The create path and the client's reads are
 * outside it; every step is inside.
 */
export async function measureParallelJournalClock(
  client: McpHttpClient,
  tasks = 20,
  steps = 50,
  runs = 3,
): Promise<ParallelJournalClock> {
  const out: ParallelJournalClock["runs"] = [];
  for (let run = 0; run < runs; run++) {
    const begin = now();
    const ids = await Promise.all(
      Array.from(
        { length: tasks },
        async () => (await client.startTask("bench_steps", { steps, payloadBytes: 0 })).taskId,
      ),
    );
    const finals = [...(await client.listenTasks(ids)).values()];
    for (const final of finals) resultOf(final.task);
    const clientMs = Math.max(...finals.map((f) => f.at)) - begin;
    const spans = await Promise.all(ids.map((id) => stepSpan(client, id)));
    if (spans.some((span) => span.n !== steps)) throw new Error(`a task's timeline has not ${steps} steps`);
    const journalSpanMs = Math.max(1, Math.max(...spans.map((s) => s.last)) - Math.min(...spans.map((s) => s.first)));
    out.push({ journalSpanMs, stepsPerSecond: (tasks * steps) / (journalSpanMs / 1000), clientMs });
  }
  return { tasks, steps, runs: out, stepsPerSecond: median(out.map((run) => run.stepsPerSecond)) };
}

export type StepRows = { perStep: PerStepRow[]; getDuringRun: GetDuringRun; parallel?: ParallelServerClock };

/** The per-step row (2,000 steps) and the flatness row (10,000), then the reads during a 10,000-step run. */
export async function measureStepRows(client: McpHttpClient, scale = 1, cpuMs?: () => number): Promise<StepRows> {
  const reps = (n: number) => Math.max(1, Math.round(n * scale));
  const perStep = await measurePerStep(
    client,
    [
      // A 2,000-step task is ≈ 10 ms of steps, and a pair's difference moves by tens of µs per step either way with
      // the HTTP requests' own noise: 31 pairs (≈ 1.5 s) for a median that noise does not decide.
      [2000, reps(31)],
      [10_000, reps(9)],
    ],
    cpuMs,
  );
  const getDuringRun = await measureGetDuringRun(client, 10_000, reps(5));
  const parallel = await measureParallelServerClock(client, 20, 50, Math.max(3, reps(5)));
  return { perStep, getDuringRun, parallel };
}

/** The rows with the two floors of the same run. */
export type StepRowsWithFloors = StepRows & { httpFloorMs: number; newObjectFloorMs: number };

/**
 * The step engine's rows against their targets, with the floors of the same run; with `previous` (null: none
 * recorded yet) a column of the previous run's figures.
 */
export function stepRowsTable(run: StepRowsWithFloors, previous?: StepRowsWithFloors | null): string {
  const was = (pick: (r: StepRowsWithFloors) => number) =>
    previous === undefined ? [] : [previous ? ms(pick(previous)) : "no previous run"];
  const perStep = (r: StepRowsWithFloors, steps: number) =>
    r.perStep.find((row) => row.steps === steps)?.perStepMs ?? NaN;
  const get = run.getDuringRun;
  return table([
    ["measure", "this run", "spread", "target", "met", ...(previous === undefined ? [] : ["previous run"])],
    ["HTTP floor: HTTP + 1 DO call, p50", ms(run.httpFloorMs), "", "", "", ...was((r) => r.httpFloorMs)],
    [
      "new-object floor: + new DO + its first row, p50",
      ms(run.newObjectFloorMs),
      "",
      "",
      "",
      ...was((r) => r.newObjectFloorMs),
    ],
    ...run.perStep.map((row) => [
      `per step, ${row.steps} steps vs 1 (median of ${row.pairs} pairs)`,
      ms(row.perStepMs),
      `pairs ${ms(row.perStepMinMs)}–${ms(row.perStepMaxMs)}` +
        (row.cpuPerStepMs === undefined ? "" : `; workerd CPU ${ms(row.cpuPerStepMs)}`),
      `≤ ${ms(PER_STEP_TARGET_MS)}`,
      perStepMet(row.perStepMs) ? "yes" : "NO",
      ...was((r) => perStep(r, row.steps)),
    ]),
    [
      `tasks/get during a ${get.steps}-step run (${get.runs} runs): worst wait between steps`,
      ms(get.worstBetweenMs),
      `p50 ${ms(get.gets.p50)}; worst of all ${ms(get.worstMs)}; ${get.sawWorking} saw it working`,
      `≤ ${GET_WAIT_TARGET_MS} ms`,
      get.worstBetweenMs <= GET_WAIT_TARGET_MS ? "yes" : "NO",
      ...was((r) => r.getDuringRun.worstBetweenMs ?? r.getDuringRun.worstMs),
    ],
    ...(run.parallel
      ? [parallelRow(run.parallel, previous === undefined ? undefined : (previous?.parallel ?? null))]
      : []),
  ]);
}

const rate = (stepsPerSecond: number) => `${Math.round(stepsPerSecond).toLocaleString("en-US")} steps/s`;

function parallelRow(p: ParallelServerClock, previous: ParallelServerClock | null | undefined): string[] {
  return [
    `${p.tasks} tasks × ${p.steps} steps, server clock (median of ${p.runs})`,
    rate(p.stepsPerSecond),
    `runs ${rate(p.minStepsPerSecond)}–${rate(p.maxStepsPerSecond)}; client clock ${rate(p.clientStepsPerSecond)}`,
    `≥ ${rate(PARALLEL_TARGET_STEPS_PER_S)}`,
    p.stepsPerSecond >= PARALLEL_TARGET_STEPS_PER_S ? "yes" : "NO",
    ...(previous === undefined ? [] : [previous ? rate(previous.stepsPerSecond) : "no previous run"]),
  ];
}
