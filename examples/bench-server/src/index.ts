// The bench server: durable-mcp-server task tools that `pnpm bench` drives over the wire, and beside them the
// platform floor in the same runtime: `/floor/*` routes and a `Floor` Durable Object that do the least a request,
// a Durable Object call, a SQLite write or a log line can do (src/floor.ts; R2's in src/files-floor.ts). No auth:
// every caller is "anonymous". Local use only.
//   /mcp               the tools with the library's defaults
//   /mcp-session-list  the same tools and TaskRunners, with a per-session 2025-11-25 `tasks/list`
//   /mcp-quiet         the same tools with task event logging off (`events: "none"`)
//   /mcp-step-events   the same tools logging every step (`events: "all"`)
//   /mcp-catalog       /mcp-session-list's settings with the D1 task catalog bound (BENCH_CATALOG): lists from it,
//                      nothing indexed at create (`pnpm bench:catalog-create`)
// /mcp-quiet and /mcp-step-events have TaskRunner classes of their own, since the event level is fixed per class.
import { durableMcp, McpServer } from "durable-mcp-server";
import * as z from "zod";
import { countedTaskRunner, countsSnapshot, resetCounts } from "./counted-runner.js";
import { filesFloor } from "./files-floor.js";
import { Floor, floor, json, MAX_PAYLOAD } from "./floor.js";

export interface Env {
  TASK_RUNNER: DurableObjectNamespace;
  QUIET_TASK_RUNNER: DurableObjectNamespace;
  STEP_EVENTS_TASK_RUNNER: DurableObjectNamespace;
  COUNTED_TASK_RUNNER: DurableObjectNamespace;
  FLOOR: DurableObjectNamespace<Floor>;
  FILE_RUNNER: DurableObjectNamespace;
  FILES: R2Bucket;
  FILE_URL_SECRET: string;
  TASK_INDEX: DurableObjectNamespace;
  MCP_SESSION_SECRET: string;
  CATALOG_TASK_RUNNER: DurableObjectNamespace;
  /** Optional: without it /mcp-catalog keeps no catalog. */
  BENCH_CATALOG?: D1Database;
}

const MAX_STEPS = 10_000;

const count = (max: number) => z.number().int().min(0).max(max);
const text = (value: unknown) => ({ content: [{ type: "text" as const, text: JSON.stringify(value) }] });

const createServer = () => {
  const server = new McpServer({ name: "durable-mcp-bench", version: "0.1.0" });

  server.registerTask(
    "bench_steps",
    {
      description: "Runs `steps` trivial sequential step.do calls, each returning `payloadBytes` characters",
      inputSchema: z.object({ steps: count(MAX_STEPS), payloadBytes: count(MAX_PAYLOAD) }),
    },
    async ({ steps, payloadBytes }, step) => {
      const payload = "x".repeat(payloadBytes);
      let bytes = 0;
      for (let i = 0; i < steps; i++) {
        const value = await step.do(`step ${i}`, async () => payload);
        bytes += value.length;
      }
      return text({ steps, bytes });
    },
  );

  server.registerTask(
    "bench_sleep",
    {
      description: "Runs `before` trivial steps, one durable sleep of `sleepMs`, then `after` trivial steps",
      inputSchema: z.object({ before: count(MAX_STEPS), sleepMs: count(3_600_000), after: count(MAX_STEPS) }),
    },
    async ({ before, sleepMs, after }, step) => {
      // Not deterministic on purpose: every run starts here, so in the run that gets past the sleep (the one the
      // alarm started after it) this times the replay of the `before` journaled steps and the sleep itself.
      const runStartedAt = Date.now();
      let steps = 0;
      for (let i = 0; i < before; i++) steps += await step.do(`before ${i}`, async () => 1);
      await step.sleep("sleep", sleepMs);
      const replayMs = Date.now() - runStartedAt;
      for (let i = 0; i < after; i++) steps += await step.do(`after ${i}`, async () => 1);
      return text({ steps, replayMs });
    },
  );

  server.registerTask(
    "bench_input",
    { description: "Asks one question (step.elicit), then completes", inputSchema: z.object({}) },
    async (_input, step) => {
      const answer = await step.elicit("continue", {
        message: "Continue?",
        requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
      });
      return text({ action: answer.action, content: answer.content ?? null });
    },
  );

  server.registerTask(
    "bench_task_only",
    {
      description: 'Runs `steps` trivial steps; task-only (`fallback: "refuse"`, taskSupport "required")',
      inputSchema: z.object({ steps: count(MAX_STEPS) }),
      fallback: "refuse",
      pollInterval: 100,
    },
    async ({ steps }, step) => {
      for (let i = 0; i < steps; i++) await step.do(`step ${i}`, async () => 1);
      return text({ steps });
    },
  );

  server.registerTask(
    "bench_inline",
    {
      description: "bench_steps with an inline budget: the result comes back in the tools/call when ready in time",
      inputSchema: z.object({ steps: count(MAX_STEPS), payloadBytes: count(MAX_PAYLOAD) }),
      inline: "50 ms",
    },
    async ({ steps, payloadBytes }, step) => {
      const payload = "x".repeat(payloadBytes);
      let bytes = 0;
      for (let i = 0; i < steps; i++) bytes += (await step.do(`step ${i}`, async () => payload)).length;
      return text({ steps, bytes });
    },
  );

  return server;
};

const mcp = durableMcp<Env>(createServer, { files: true });
export const TaskRunner = mcp.TaskRunner;
export const FileRunner = mcp.FileRunner;
export const TaskIndex = mcp.TaskIndex;

// The same tools and TaskRunners as /mcp, opted into per-session 2025-11-25 `tasks/list` (/mcp, without
// authenticate, neither advertises nor serves it; docs/clients.md).
const sessionList = durableMcp<Env>(createServer, { files: true, path: "/mcp-session-list", taskList: "session" });

// /mcp-session-list with the task catalog bound: its runners (a class of their own, since the catalog binding is
// fixed per class) file their rows in BENCH_CATALOG after each change, and its per-session `tasks/list` reads them
// there, so a create writes no TaskIndex entry first. The other endpoints name no catalog binding that is bound
// (the library's default is TASK_CATALOG), so they keep no catalog.
const catalog = durableMcp<Env>(createServer, {
  binding: "CATALOG_TASK_RUNNER",
  files: true,
  path: "/mcp-catalog",
  taskList: "session",
  catalog: "BENCH_CATALOG",
  index: false,
});
export const CatalogTaskRunner = catalog.TaskRunner;

// Their tasks live in other TaskRunner namespaces, so they keep out of /mcp's index.
const quiet = durableMcp<Env>(createServer, {
  binding: "QUIET_TASK_RUNNER",
  path: "/mcp-quiet",
  events: "none",
  index: false,
});
export const QuietTaskRunner = quiet.TaskRunner;

const stepEvents = durableMcp<Env>(createServer, {
  binding: "STEP_EVENTS_TASK_RUNNER",
  path: "/mcp-step-events",
  events: "all",
  index: false,
});
export const StepEventsTaskRunner = stepEvents.TaskRunner;

// /mcp-counted: /mcp-quiet's settings on a TaskRunner whose objects count their calls, alarms and rows written
// (src/counted-runner.ts, `pnpm bench:pool-cost`); /mcp-counted-nopool is the same endpoint served without `ctx`, so
// that every create makes its object on the call (no pre-created runners).
const counted = durableMcp<Env>(createServer, {
  binding: "COUNTED_TASK_RUNNER",
  path: "/mcp-counted",
  events: "none",
  index: false,
});
export const CountedTaskRunner = countedTaskRunner(counted.TaskRunner);
export { Floor };

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    // `pnpm bench:get` asks for the Worker's own time per request (workerd's clock, whole milliseconds locally, so
    // only a mean over many requests says anything); every other request is served as it is.
    if (request.headers.has("x-bench-timing")) {
      const begin = performance.now();
      const response = await route(request, env, ctx);
      const timed = new Response(response.body, response);
      timed.headers.set("server-timing", `worker;dur=${performance.now() - begin}`);
      return timed;
    }
    return route(request, env, ctx);
  },
};

async function route(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  const url = new URL(request.url);
  // With ctx, task creates use the library's pre-created TaskRunners (refilled after each reply).
  if (url.pathname === "/mcp") return mcp.serve(request, env, ctx);
  if (url.pathname === "/mcp-session-list") return sessionList.serve(request, env, ctx);
  if (url.pathname === "/mcp-catalog") return catalog.serve(request, env, ctx);
  if (url.pathname === "/mcp-quiet") return quiet.serve(request, env, ctx);
  if (url.pathname === "/mcp-step-events") return stepEvents.serve(request, env, ctx);
  if (url.pathname === "/mcp-counted") return counted.serve(request, env, ctx);
  if (url.pathname === "/mcp-counted-nopool") return counted.serve(request, env);
  if (url.pathname === "/bench/counts") {
    const counts = countsSnapshot();
    if (url.searchParams.get("reset") === "1") resetCounts();
    return json(counts);
  }
  if (url.pathname.startsWith("/floor/")) return (await filesFloor(request, url, env)) ?? floor(request, url, env);
  if (url.pathname === "/files" || url.pathname.startsWith("/files/")) return mcp.serveFiles(request, env);
  return new Response("Not found", { status: 404 });
}
