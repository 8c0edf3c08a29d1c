// The reliability lab Worker: one task tool, `lab_job`, whose steps each report their execution to an external
// counter service (COUNTER_URL) before doing their "work" (a real delay), so the tests in test/ can count how
// often every step body ran while `wrangler dev` is killed and restarted under it, or loaded with 500 tasks.
// No auth: every caller is "anonymous". Local use only.
import { durableMcp, McpServer } from "durable-mcp-server";
import * as z from "zod";
import { workValue, type LabJobArgs, type LabJobOutcome } from "./lab.js";

export interface Env {
  TASK_RUNNER: DurableObjectNamespace;
  /** Base URL of the counter service, e.g. http://127.0.0.1:40123 (empty: steps report nowhere). */
  COUNTER_URL: string;
  /** Which `wrangler dev` instance runs this code (the tests number their restarts); reported with every effect. */
  INSTANCE: string;
}

/** The arguments of `lab_job` (see LabJobArgs in lab.ts). */
const input = z.object({
  steps: z.number().int().min(1).max(50),
  stepMs: z.number().int().min(0).max(60_000),
  sleepMs: z.number().int().min(0).max(3_600_000),
  flaky: z
    .object({ failFirst: z.number().int().min(1).max(3), retryMs: z.number().int().min(0).max(60_000) })
    .optional(),
  ask: z.boolean(),
  salt: z.number().int().min(0).max(1_000_000),
}) satisfies z.ZodType<LabJobArgs>;

const abortableDelay = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

/**
 * The external effect: one POST per step execution, carrying the step's idempotency key (`<taskId>:<step>`), its
 * attempt and the instance that runs it.
 */
async function report(env: Env, idempotencyKey: string, attempt: number, signal: AbortSignal): Promise<void> {
  if (!env.COUNTER_URL) return;
  const response = await fetch(`${env.COUNTER_URL}/hit`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
    body: JSON.stringify({ key: idempotencyKey, attempt, instance: Number(env.INSTANCE) }),
    signal,
  });
  await response.body?.cancel();
  if (!response.ok) throw new Error(`counter answered HTTP ${response.status}`);
}

/**
 * The retry budget of every step. An attempt cut short by a crash counts as an attempt (the journal wrote it
 * before the body ran), so the budget must outlast the crash suite's kills; a genuine failure (none is expected)
 * still shows up as a repeat within one instance, which the suite reports.
 */
const CRASH_BUDGET = 12;
const WORK_RETRIES = { retries: { limit: CRASH_BUDGET, delay: 500, backoff: "constant" as const } };

const createServer = (env: Env) => {
  const server = new McpServer({ name: "reliability-lab", version: "0.1.0" });

  server.registerTask(
    "lab_job",
    {
      description: "Work steps that each report to a counter, a durable sleep, a flaky step, optionally a question",
      inputSchema: input,
      fallback: "refuse",
      pollInterval: 500,
    },
    async ({ steps, stepMs, sleepMs, flaky, ask, salt }, step) => {
      const values: number[] = [];
      const attempts: Record<string, number> = {};
      const work = async (index: number) => {
        const name = `work ${index}`;
        const done = await step.do(name, WORK_RETRIES, async ({ attempt, signal, idempotencyKey }) => {
          await report(env, idempotencyKey, attempt, signal);
          await abortableDelay(stepMs, signal);
          return { value: workValue(salt, index), attempt };
        });
        values.push(done.value);
        attempts[name] = done.attempt;
      };

      const half = Math.ceil(steps / 2);
      for (let i = 0; i < half; i++) await work(i);
      if (sleepMs > 0) await step.sleep("nap", sleepMs);
      if (flaky) {
        const done = await step.do(
          "flaky",
          { retries: { limit: flaky.failFirst + CRASH_BUDGET, delay: flaky.retryMs, backoff: "constant" } },
          async ({ attempt, signal, idempotencyKey }) => {
            await report(env, idempotencyKey, attempt, signal);
            await abortableDelay(stepMs, signal);
            if (attempt <= flaky.failFirst) throw new Error(`flaky: attempt ${attempt} fails by design`);
            return { attempt };
          },
        );
        attempts.flaky = done.attempt;
      }
      let answer: string | null = null;
      if (ask) {
        const reply = await step.elicit("approve", {
          message: "Approval code?",
          requestedSchema: { type: "object", properties: { code: { type: "string" } }, required: ["code"] },
        });
        answer =
          reply.action === "accept" && typeof reply.content?.code === "string" ? reply.content.code : reply.action;
      }
      for (let i = half; i < steps; i++) await work(i);

      const outcome: LabJobOutcome = { values, attempts, answer };
      return { content: [{ type: "text", text: JSON.stringify(outcome) }], structuredContent: outcome };
    },
  );

  return server;
};

const mcp = durableMcp<Env>(createServer);
export const TaskRunner = mcp.TaskRunner;
export default { fetch: mcp.fetch };
