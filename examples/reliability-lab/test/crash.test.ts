// Crashes: `wrangler dev` (wrangler and its workerd: the whole process group) is SIGKILLed at random moments while
// tasks run steps, sleep, wait out a retry back-off or wait for an answer, and is started again on the same
// persist dir each time. Every step body reports its execution to the counter service, tagged with the instance
// that ran it. Afterwards every task must have reached its right final state with the right result, and the
// counter must show that a step which finished never ran again, and that a step ran more than once only across
// kills, at most once more per kill: the step that was in flight when the process died.
import { FINAL, sleep, TransportError, type Task } from "@durable-mcp/test-harness";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { LabJobArgs } from "../src/lab.ts";
import { hitsByJob } from "./counter.ts";
import { doingAtKill, judge, type CheckedJob, type Role } from "./crash-checks.ts";
import { answerTask, cancelTask, getTask, startJob, transportRetries } from "./mcp.ts";
import { seeded, suiteSeed, type Random } from "./random.ts";
import { startLab, type LabServer } from "./wrangler.ts";

const counterUrl = inject("counterUrl");
const SEED = suiteSeed();
/** Tasks started before the first kill. */
const INITIAL_TASKS = 24;
/** Tasks started while the kills go on (their tools/call may race a kill, and is then retried with its key). */
const LATE_TASKS = 6;
const LATE_AT_KILLS = new Set([3, 6]);
const KILLS = 10;
/** How long the tasks may take to finish after the last restart. */
const SETTLE_MS = 60_000;

interface Job extends CheckedJob {
  key: string;
  /** The answer or the cancel goes out once the task waits for it and this instance (or a later one) runs. */
  due: number;
  /** A task started during the kills goes out this long before a kill, so that its tools/call may race it. */
  raceMs: number;
  finalSeenIn?: number;
  answeredIn?: number;
  cancelledIn?: number;
}

function plan(rand: Random): Job[] {
  const roles: Role[] = ["plain", "answer", "plain", "answer", "cancel"];
  return Array.from({ length: INITIAL_TASKS + LATE_TASKS }, (_, index): Job => {
    const role = roles[index % roles.length]!;
    const args: LabJobArgs = {
      steps: rand.int(3, 8),
      stepMs: rand.int(150, 400),
      sleepMs: rand.chance(0.75) ? rand.int(300, 2500) : 0,
      ...(rand.chance(0.6) ? { flaky: { failFirst: rand.int(1, 2), retryMs: rand.int(300, 1500) } } : {}),
      ask: role !== "plain",
      salt: rand.int(0, 999),
      job: `crash-${SEED}-${index}`,
    };
    return {
      index,
      key: `crash-${SEED}-${index}`,
      role,
      args,
      due: rand.int(1, KILLS + 1),
      raceMs: rand.int(0, 40),
      code: `code-${index}-${rand.int(0, 999_999)}`,
      statusIn: new Map(),
    };
  });
}

describe("crashes: SIGKILL of wrangler dev at random moments, restarted on the same state", () => {
  let lab: LabServer | undefined;

  beforeAll(async () => {
    lab = await startLab("crash", counterUrl);
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it(
    "brings every task to its right final state; finished steps never run again, one repeat per kill at most",
    { timeout: 150_000 },
    async () => {
      const server = lab!;
      console.log(`crash suite: seed ${SEED} (replay with RELIABILITY_SEED=${SEED})`);
      const rand = seeded(SEED);
      const jobs = plan(rand);
      const delays = Array.from({ length: KILLS }, () => rand.int(100, 1500));
      const unexpected: string[] = [];
      const begin = Date.now();

      const create = async (job: Job) => {
        try {
          const task = await startJob(server.url, job.args, { key: job.key, deadline: Date.now() + 60_000 });
          job.taskId = task.taskId;
        } catch (error) {
          unexpected.push(`task ${job.index}: tools/call failed: ${String(error)}`);
        }
      };

      /** One pass over the live tasks: read each, answer or cancel the ones whose turn it is. No retries. */
      const tend = async () => {
        const live = jobs.filter((job) => job.taskId !== undefined && job.finalSeenIn === undefined);
        await Promise.all(
          live.map(async (job) => {
            const instance = server.instance;
            try {
              const view = await getTask(server.url, job.taskId!, false);
              job.statusIn.set(instance, view.status);
              if (FINAL.has(view.status)) {
                job.finalSeenIn = instance;
              } else if (view.status === "input_required" && instance >= job.due) {
                if (job.role === "answer") {
                  await answerTask(server.url, job.taskId!, job.code, false);
                  job.answeredIn ??= instance;
                } else if (job.role === "cancel") {
                  await cancelTask(server.url, job.taskId!, false);
                  job.cancelledIn ??= instance;
                }
              }
            } catch (error) {
              // The server is being killed or restarted: the next pass tries again.
              if (!(error instanceof TransportError)) unexpected.push(`task ${job.index}: ${String(error)}`);
            }
          }),
        );
      };

      await Promise.all(jobs.slice(0, INITIAL_TASKS).map(create));
      const tending = { on: true };
      const tender = (async () => {
        while (tending.on) {
          await tend();
          await sleep(150);
        }
      })();

      const kills: { instance: number; afterMs: number }[] = [];
      const lateCreates: Promise<void>[] = [];
      let late = INITIAL_TASKS;
      for (let k = 1; k <= KILLS; k++) {
        const delay = delays[k - 1]!;
        if (LATE_AT_KILLS.has(k)) {
          const batch = jobs.slice(late, late + LATE_TASKS / LATE_AT_KILLS.size);
          late += batch.length;
          lateCreates.push(...batch.map((job) => sleep(Math.max(0, delay - job.raceMs)).then(() => create(job))));
        }
        await sleep(delay);
        kills.push({ instance: server.instance, afterMs: delay });
        await server.crash();
        await server.start();
      }
      await Promise.all(lateCreates);
      const lastRestart = Date.now();

      const deadline = lastRestart + SETTLE_MS;
      while (jobs.some((job) => job.taskId !== undefined && job.finalSeenIn === undefined) && Date.now() < deadline) {
        await sleep(200);
      }
      tending.on = false;
      await tender;
      const settledMs = Date.now() - lastRestart;

      // Nothing lost: every task the suite started still answers, and calling again with its key joins it.
      expect(unexpected).toEqual([]);
      expect(jobs.filter((job) => job.taskId === undefined)).toEqual([]);
      expect(kills.map((kill) => kill.instance)).toEqual(Array.from({ length: KILLS }, (_, i) => i + 1));
      const views = new Map<Job, Task>();
      for (const job of jobs) {
        views.set(job, await getTask(server.url, job.taskId!));
        const again = await startJob(server.url, job.args, { key: job.key });
        expect(again.taskId).toBe(job.taskId);
        expect(again.status).toBe(views.get(job)!.status);
      }

      const hits = await hitsByJob(
        counterUrl,
        jobs.map((job) => job.args.job),
      );
      const problems: string[] = [];
      let crashRepeats = 0;
      let cutBeforeEffect = 0;
      const cutShort = new Map<string, number>();
      for (const job of jobs) {
        const taskHits = hits.get(job.args.job)!;
        const verdict = judge(job, views.get(job)!, taskHits);
        problems.push(...verdict.problems);
        crashRepeats += verdict.crashRepeats;
        cutBeforeEffect += verdict.cutBeforeEffect;
        for (const kill of kills) {
          const doing = doingAtKill(job, taskHits, kill.instance);
          if (doing) cutShort.set(doing, (cutShort.get(doing) ?? 0) + 1);
        }
      }
      const executions = [...hits.values()].reduce((sum, list) => sum + list.length, 0);
      const statuses = jobs.reduce<Record<string, number>>((count, job) => {
        const status = views.get(job)!.status;
        count[status] = (count[status] ?? 0) + 1;
        return count;
      }, {});
      console.log(
        JSON.stringify({
          suite: "crash",
          seed: SEED,
          tasks: jobs.length,
          kills: kills.length,
          killDelaysMs: kills.map((kill) => kill.afterMs),
          finalStatuses: statuses,
          stepExecutions: executions,
          answersBeforeLastKill: jobs.filter((job) => (job.answeredIn ?? Infinity) <= KILLS).length,
          cancelsBeforeLastKill: jobs.filter((job) => (job.cancelledIn ?? Infinity) <= KILLS).length,
          repeatsAfterKills: crashRepeats,
          attemptsKilledBeforeTheirEffect: cutBeforeEffect,
          tasksAtKills: Object.fromEntries(cutShort),
          transportRetries: transportRetries.count,
          settledAfterLastRestartMs: settledMs,
          totalMs: Date.now() - begin,
        }),
      );
      if (problems.length > 0) console.log(server.log().split("\n").slice(-60).join("\n"));
      expect(problems).toEqual([]);
    },
  );
});
