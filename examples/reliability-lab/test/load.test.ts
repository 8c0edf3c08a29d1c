// Load: 500 tasks live at once under `wrangler dev`, driven by a client that keeps at most 50 requests in flight.
// A third of them ask a question the client answers, a fifth are cancelled (half while they wait for an answer,
// half during a long durable sleep); a few retry a failing step. Every task must reach its right final state and
// none may be lost; with no crash, every step's effect must have happened exactly once (flaky: once per attempt).
// Latencies, throughput and the resident memory of workerd before, during and after are printed as one JSON line
// (docs/reliability.md records them).
import { FINAL, sleep, type Task } from "@durable-mcp/test-harness";
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from "vitest";
import { effectSteps, stepOrder, workValue, type LabJobArgs, type LabJobOutcome } from "../src/lab.ts";
import { hitsByJob, stepOf } from "./counter.ts";
import { attemptHistories, describeHistory, judgeStep, type AttemptEntry } from "./load-checks.ts";
import { answerTask, cancelTask, getTask, startJob } from "./mcp.ts";
import { seeded, suiteSeed, type Random } from "./random.ts";
import { startLab, type LabServer } from "./wrangler.ts";

const counterUrl = inject("counterUrl");
const SEED = suiteSeed();
const TASKS = 500;
const IN_FLIGHT = 50;
const POLL_MS = 1000;
/** How long all 500 may take to reach a final state. */
const SETTLE_MS = 75_000;

/**
 * plain: runs to completion; answer: asks, is answered; cancel-waiting: asks, is cancelled while it waits;
 * cancel-sleeping: sleeps ten minutes after its first step, is cancelled soon after it starts.
 */
type Role = "plain" | "answer" | "cancel-waiting" | "cancel-sleeping";

interface Job {
  index: number;
  role: Role;
  args: LabJobArgs;
  code: string;
  /** Client think time before answering or cancelling. */
  delayMs: number;
  taskId?: string;
  createMs?: number;
  final?: Task;
  /** Each `do` step's attempt history, from the step timeline of a tasks/get after the task was final. */
  histories?: Map<string, AttemptEntry[]>;
  problems: string[];
}

function plan(rand: Random): Job[] {
  // Exactly a fifth cancelled (half of them waiting for an answer), a third answered, the rest plain; shuffled.
  const cancels = TASKS / 5;
  const roles: Role[] = Array.from({ length: TASKS }, (_, i): Role => {
    if (i < cancels / 2) return "cancel-waiting";
    if (i < cancels) return "cancel-sleeping";
    if (i < cancels + Math.round(TASKS / 3)) return "answer";
    return "plain";
  });
  for (let i = roles.length - 1; i > 0; i--) {
    const j = rand.int(0, i);
    [roles[i], roles[j]] = [roles[j]!, roles[i]!];
  }
  return roles.map((role, index) => ({
    index,
    role,
    args: {
      steps: 2,
      stepMs: rand.int(0, 50),
      sleepMs: role === "cancel-sleeping" ? 600_000 : rand.chance(0.5) ? rand.int(100, 1000) : 0,
      ...(role !== "cancel-sleeping" && rand.chance(0.1) ? { flaky: { failFirst: 1, retryMs: 200 } } : {}),
      ask: role === "answer" || role === "cancel-waiting",
      salt: rand.int(0, 999),
      job: `load-${SEED}-${index}`,
    },
    code: `load-${index}`,
    delayMs: rand.int(0, 500),
    problems: [],
  }));
}

/** At most `max` calls of the returned function run at once; the rest queue, first come first served. */
function limiter(max: number) {
  let active = 0;
  const queue: (() => void)[] = [];
  const acquire = () => {
    if (active < max) {
      active++;
      return Promise.resolve();
    }
    return new Promise<void>((wake) => queue.push(wake));
  };
  // A finished call hands its slot straight to the next one in the queue.
  const release = () => {
    const next = queue.shift();
    if (next) next();
    else active--;
  };
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    await acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  };
}

/** Server-side time from creation to the final state, by the task's own timestamps. */

/** Server-side time from creation to the final state, by the task's own timestamps. */
const serverMs = (job: Job) => Date.parse(job.final!.lastUpdatedAt) - Date.parse(job.final!.createdAt);

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const summary = (values: number[]) => {
  const sorted = values.toSorted((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1),
  };
};
const mib = (kib: number) => Math.round(kib / 1024);

describe("load: 500 concurrent tasks with answers and cancels under wrangler dev", () => {
  let lab: LabServer | undefined;

  beforeAll(async () => {
    lab = await startLab("load", counterUrl);
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it(
    "brings all 500 to their right final state, none lost, every effect once; workerd then evicts them all",
    { timeout: 110_000 },
    async () => {
      const server = lab!;
      console.log(`load suite: seed ${SEED} (replay with RELIABILITY_SEED=${SEED})`);
      const jobs = plan(seeded(SEED));
      const limit = limiter(IN_FLIGHT);
      let requests = 0;
      const call = <T>(fn: () => Promise<T>) =>
        limit(() => {
          requests++;
          return fn();
        });

      const heapBefore = await server.isolateHeap();
      const rssBefore = server.workerdRssKiB();
      let rssPeak = rssBefore;
      let residentPeak = 0;
      const sampling = { on: true };
      onTestFinished(() => {
        sampling.on = false;
      });
      const sampler = (async () => {
        while (sampling.on) {
          rssPeak = Math.max(rssPeak, server.workerdRssKiB());
          residentPeak = Math.max(residentPeak, server.residentTaskRunners());
          await sleep(250);
        }
      })();

      const begin = performance.now();
      let lastFinal = begin;
      const drive = async (job: Job) => {
        const task = await call(async () => {
          const sent = performance.now();
          const created = await startJob(server.url, job.args, { retry: false });
          job.createMs = performance.now() - sent;
          return created;
        });
        job.taskId = task.taskId;
        let acted = false;
        for (;;) {
          if (job.role === "cancel-sleeping" && !acted) {
            await sleep(job.delayMs);
            await call(() => cancelTask(server.url, task.taskId, false));
            acted = true;
          }
          // Spread the polls over the interval so 500 tasks do not poll in lockstep.
          await sleep(POLL_MS / 2 + (job.index % 10) * (POLL_MS / 10));
          const view = await call(() => getTask(server.url, task.taskId, false));
          if (FINAL.has(view.status)) {
            job.final = view;
            lastFinal = performance.now();
            return;
          }
          if (view.status === "input_required" && !acted) {
            await sleep(job.delayMs);
            if (job.role === "answer") await call(() => answerTask(server.url, task.taskId, job.code, false));
            else if (job.role === "cancel-waiting") await call(() => cancelTask(server.url, task.taskId, false));
            else job.problems.push(`asked for input: ${JSON.stringify(view)}`);
            acted = true;
          }
        }
      };

      const failures: string[] = [];
      const run = Promise.allSettled(jobs.map(drive)).then((outcomes) =>
        outcomes.forEach((outcome, i) => {
          if (outcome.status === "rejected") failures.push(`task ${i} (${jobs[i]!.role}): ${String(outcome.reason)}`);
        }),
      );
      const timedOut = await Promise.race([run.then(() => false), sleep(SETTLE_MS).then(() => true)]);
      const wallMs = lastFinal - begin;
      const rssSettled = server.workerdRssKiB();

      if (timedOut || failures.length > 0) {
        console.log(
          `wrangler output (last lines):\n${server
            .log()
            .split("\n")
            .filter((line) => !line.includes('"event":'))
            .slice(-60)
            .join("\n")}`,
        );
      }
      const stuck = jobs.filter((job) => !job.final).map((job) => `${job.index} (${job.role}, ${job.taskId})`);
      expect(timedOut ? `not final after ${SETTLE_MS} ms: ${stuck.join(", ")}` : "all final").toBe("all final");
      expect(failures).toEqual([]);

      // Nothing lost: every task still answers tasks/get, with the state its client saw last (and its step timeline,
      // whose attempt histories tell an attempt that failed from one that was cut short).
      const regetFrom = performance.now();
      await Promise.all(
        // Through the limiter but not counted: `requests` and the throughput figures are the run's own traffic.
        jobs.map((job) =>
          limit(async () => {
            const again = await getTask(server.url, job.taskId!, true, { steps: true });
            if (again.status !== job.final!.status) job.problems.push(`tasks/get now says ${again.status}`);
            job.histories = attemptHistories(again);
          }),
        ),
      );
      const regetMs = Math.round(performance.now() - regetFrom);

      const hits = await hitsByJob(
        counterUrl,
        jobs.map((job) => job.args.job),
      );
      for (const job of jobs) {
        const view = job.final!;
        const cancelled = job.role === "cancel-waiting" || job.role === "cancel-sleeping";
        const expected = cancelled ? "cancelled" : "completed";
        if (view.status !== expected) job.problems.push(`ended ${view.status}, expected ${expected}`);
        if (expected === "completed" && view.status === "completed") {
          const outcome = view.result?.structuredContent as LabJobOutcome | undefined;
          const values = [workValue(job.args.salt, 0), workValue(job.args.salt, 1)];
          const answer = job.role === "answer" ? job.code : null;
          if (
            view.result?.isError ||
            JSON.stringify(outcome?.values) !== JSON.stringify(values) ||
            outcome?.answer !== answer
          ) {
            job.problems.push(
              `result ${JSON.stringify(view.result)}, expected values ${JSON.stringify(values)} and answer ${answer}`,
            );
          }
        }
        // No crash here, so every effect happened exactly once per attempt: attempts 1…n, n = 1 (flaky: 2); an attempt
        // whose own report to the counter failed may be missing (judgeStep, load-checks.ts).
        const all = stepOrder(job.args);
        const afterQuestion = new Set(all.slice(all.indexOf("approve") + 1));
        const taskHits = hits.get(job.args.job)!;
        for (const name of effectSteps(job.args)) {
          const attempts = taskHits.filter((hit) => stepOf(hit) === name).map((hit) => hit.attempt);
          let wanted: number[][];
          if (job.role === "cancel-sleeping") wanted = name === "work 0" ? [[], [1]] : [[]];
          else if (job.role === "cancel-waiting" && afterQuestion.has(name)) wanted = [[]];
          else wanted = [name === "flaky" ? [1, 2] : [1]];
          const problem = judgeStep(name, attempts, wanted, job.histories?.get(name));
          if (problem) job.problems.push(problem);
        }
        if (taskHits.some((hit) => !effectSteps(job.args).includes(stepOf(hit))))
          job.problems.push("an unknown step ran");
      }

      // Attempts that failed other than by design (the flaky step's first), by error: with no crash, only a failed
      // report to the counter is expected here, and the fewer the better (test/counter.ts).
      const failedSteps: string[] = [];
      const unplannedAttemptFailures = jobs.reduce<Record<string, number>>((count, job) => {
        for (const [name, history] of job.histories ?? []) {
          for (const attempt of history) {
            if (!attempt.error || (name === "flaky" && attempt.n <= (job.args.flaky?.failFirst ?? 0))) continue;
            const key = `${attempt.error.name}: ${attempt.error.message}`;
            count[key] = (count[key] ?? 0) + 1;
            const attempts = hits
              .get(job.args.job)!
              .filter((hit) => stepOf(hit) === name)
              .map((hit) => hit.attempt);
            failedSteps.push(
              `task ${job.index} (${job.role}) "${name}": counter saw ${JSON.stringify(attempts)}; ${describeHistory(history)}`,
            );
          }
        }
        return count;
      }, {});
      // Printed now as well: on a loaded machine the eviction wait below may outlast the test's timeout.
      const early = jobs.flatMap((job) =>
        job.problems.map((p) => `task ${job.index} (${job.role}, ${job.taskId}): ${p}`),
      );
      if (early.length > 0) console.log(`load suite problems:\n${early.join("\n")}`);
      console.log(
        `load suite: all final after ${Math.round(wallMs)} ms, re-read in ${regetMs} ms; unplanned attempt failures ${JSON.stringify(unplannedAttemptFailures)}${failedSteps
          .slice(0, 5)
          .map((line) => `\n  ${line}`)
          .join("")}`,
      );

      // Idle objects leave memory: wait for workerd to evict the task objects (final, or parked on a ten-minute sleep).
      const idleSince = performance.now();
      const timeline: [number, number, number][] = [];
      for (;;) {
        const resident = server.residentTaskRunners();
        timeline.push([Math.round((performance.now() - idleSince) / 1000), resident, mib(server.workerdRssKiB())]);
        if (resident === 0 || performance.now() - idleSince > 45_000) break;
        await sleep(1000);
      }
      sampling.on = false;
      await sampler;
      // Last: a DevTools connection costs workerd memory of its own (~150 MiB with 500 objects resident).
      const heapIdle = await server.isolateHeap();

      const byRole = (role: Role) => jobs.filter((job) => job.role === role);
      const figures = {
        suite: "load",
        seed: SEED,
        tasks: TASKS,
        clientInFlight: IN_FLIGHT,
        roles: Object.fromEntries(
          (["plain", "answer", "cancel-waiting", "cancel-sleeping"] as const).map((r) => [r, byRole(r).length]),
        ),
        finalStatuses: jobs.reduce<Record<string, number>>((count, job) => {
          count[job.final!.status] = (count[job.final!.status] ?? 0) + 1;
          return count;
        }, {}),
        stepExecutions: [...hits.values()].reduce((sum, list) => sum + list.length, 0),
        unplannedAttemptFailures,
        requests,
        regetMs,
        wallMs: Math.round(wallMs),
        tasksPerSecond: Math.round((TASKS / wallMs) * 1000 * 10) / 10,
        requestsPerSecond: Math.round((requests / wallMs) * 1000),
        createMs: summary(jobs.map((job) => Math.round(job.createMs!))),
        // Server-side, created → completed, for tasks that never waited on the client (plain; no sleep, no retry).
        completeMsNoWaits: summary(
          byRole("plain")
            .filter((job) => job.args.sleepMs === 0 && !job.args.flaky)
            .map(serverMs),
        ),
        completeMsAllPlain: summary(byRole("plain").map(serverMs)),
        workerdRssMiB: {
          before: mib(rssBefore),
          peak: mib(rssPeak),
          settled: mib(rssSettled),
          idle: timeline.at(-1)![2],
        },
        residentTaskRunners: { peak: residentPeak, idle: timeline.at(-1)![1], idleAfterS: timeline.at(-1)![0] },
        isolateHeapUsedMiB: {
          before: mib(heapBefore.usedSize / 1024),
          idle: mib(heapIdle.usedSize / 1024),
        },
        idleTimeline: timeline,
      };
      console.log(JSON.stringify(figures));

      const problems = jobs.flatMap((job) =>
        job.problems.map((p) => `task ${job.index} (${job.role}, ${job.taskId}): ${p}`),
      );
      expect(problems).toEqual([]);
      // Memory bounded: nothing pins a task object once it is final or parked on a durable sleep, so workerd evicts
      // every one of them (the figures above show what that does to workerd's RSS and the isolate's heap).
      expect(timeline.at(-1)![1]).toBe(0);
    },
  );
});
