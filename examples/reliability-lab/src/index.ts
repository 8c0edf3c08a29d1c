// The reliability lab Worker: one task tool, `lab_job`, whose steps each report their execution to an external
// counter service (COUNTER_URL) before doing their "work" (a real delay), so the tests in test/ can count how
// often every step body ran while `wrangler dev` is killed and restarted under it, or loaded with 500 tasks.
// Files by handle too (tus uploads into the FILES bucket, signed downloads, the file tools), for the files suite,
// and `PUT /bench/raw-put`: one plain R2 put() of the request body, the floor the tus upload is compared with.
// No real auth: a request without Authorization is "anonymous", `Authorization: Bearer <name>` is principal
// <name> (so the files suite can show one principal's files are invisible to another). Local use only.
import { durableMcp, McpServer, type Caller } from "durable-mcp-server";
import * as z from "zod";
import { COUNTER_REPORT_ERROR, LAB_MAX_FILE_BYTES, workValue, type LabJobArgs, type LabJobOutcome } from "./lab.js";

export interface Env {
  TASK_RUNNER: DurableObjectNamespace;
  FILE_RUNNER: DurableObjectNamespace;
  FILES: R2Bucket;
  /** Signs the file URLs; a test-only value in wrangler.jsonc (see the comment there). */
  FILE_URL_SECRET: string;
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
  job: z.string().min(1).max(128),
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

/** The report to the counter did not succeed (COUNTER_REPORT_ERROR in lab.ts: the name the load suite looks for). */
class CounterReportError extends Error {
  override readonly name = COUNTER_REPORT_ERROR;
}

/**
 * The external effect: one POST per step execution, carrying the step's idempotency key (opaque, stable per task
 * and step), the job and step it belongs to, its attempt and the instance that runs it.
 */
async function report(
  env: Env,
  effect: { job: string; step: string; idempotencyKey: string; attempt: number },
  signal: AbortSignal,
): Promise<void> {
  const { job, step, idempotencyKey, attempt } = effect;
  if (!env.COUNTER_URL) return;
  let response: Response;
  try {
    response = await fetch(`${env.COUNTER_URL}/hit`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify({ key: idempotencyKey, job, step, attempt, instance: Number(env.INSTANCE) }),
      signal,
    });
  } catch (error) {
    // Aborted by a cancel: the runtime's own reason, as is. Otherwise the effect's request itself failed.
    if (signal.aborted) throw error;
    throw new CounterReportError(`counter request failed: ${String(error)}`, { cause: error });
  }
  await response.body?.cancel();
  if (!response.ok) throw new CounterReportError(`counter answered HTTP ${response.status}`);
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
    async ({ steps, stepMs, sleepMs, flaky, ask, salt, job }, step) => {
      const values: number[] = [];
      const attempts: Record<string, number> = {};
      const work = async (index: number) => {
        const name = `work ${index}`;
        const done = await step.do(name, WORK_RETRIES, async ({ attempt, signal, idempotencyKey }) => {
          await report(env, { job, step: name, idempotencyKey, attempt }, signal);
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
            await report(env, { job, step: "flaky", idempotencyKey, attempt }, signal);
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

/** No Authorization: "anonymous" (the crash and load suites); `Bearer <name>`: principal <name>; else 401. */
function authenticate(request: Request): Caller | Response {
  const header = request.headers.get("Authorization");
  if (header === null) return { principal: "anonymous" };
  const match = /^Bearer ([A-Za-z0-9_-]{1,64})$/.exec(header);
  if (!match) {
    return new Response("Authorization must be Bearer <name>\n", {
      status: 401,
      headers: { "WWW-Authenticate": 'Bearer realm="reliability-lab"' },
    });
  }
  return { principal: match[1]! };
}

const mcp = durableMcp<Env>(createServer, { authenticate, files: { maxSize: LAB_MAX_FILE_BYTES } });
/** The library's defaults (no `authenticate`): what the hostile-HTTP suite checks DNS-rebinding protection on. */
const open = durableMcp<Env>(createServer, { path: "/open/mcp" });
export const TaskRunner = mcp.TaskRunner;
export const FileRunner = mcp.FileRunner;

/**
 * `PUT /bench/raw-put?size=<bytes>`: streams the request body into one `FILES.put()` under a fresh key and answers
 * `{ key, size, putMs }` (putMs: the put() call as the Worker saw it). The body must carry a Content-Length equal to
 * `size`: R2 takes a stream only when its length is known, and FixedLengthStream makes sure it is.
 * `DELETE /bench/raw-put?key=<key>` removes the object again.
 */
async function rawPut(request: Request, env: Env): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === "DELETE") {
    const key = url.searchParams.get("key") ?? "";
    if (!key.startsWith("bench/")) return new Response("key must start with bench/\n", { status: 400 });
    await env.FILES.delete(key);
    return new Response(null, { status: 204 });
  }
  if (request.method !== "PUT") {
    return new Response("Method not allowed\n", { status: 405, headers: { Allow: "PUT, DELETE" } });
  }
  const size = Number(url.searchParams.get("size"));
  if (!Number.isSafeInteger(size) || size < 0 || size > LAB_MAX_FILE_BYTES) {
    return new Response(`size must be an integer in [0, ${LAB_MAX_FILE_BYTES}]\n`, { status: 400 });
  }
  if (request.headers.get("Content-Length") !== String(size) || !request.body) {
    return new Response("the body must have Content-Length equal to size\n", { status: 411 });
  }
  const key = `bench/raw-put-${crypto.randomUUID()}`;
  const started = Date.now();
  const object = await env.FILES.put(key, request.body.pipeThrough(new FixedLengthStream(size)));
  const putMs = Date.now() - started;
  if (!object) return new Response("put() stored nothing\n", { status: 500 });
  return Response.json({ key, size: object.size, putMs });
}

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const pathname = new URL(request.url).pathname;
    if (pathname === "/bench/raw-put") return rawPut(request, env);
    if (pathname === "/open/mcp") return open.fetch(request, env, ctx);
    return mcp.fetch(request, env, ctx);
  },
} satisfies ExportedHandler<Env>;
