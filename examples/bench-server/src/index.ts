// The bench server: durable-mcp-server task tools that `pnpm bench` drives over the wire, and beside them the
// platform floor in the same runtime: `/floor/*` routes and a `Floor` Durable Object that do the least a request,
// a Durable Object call or a SQLite write can do. No auth: every caller is "anonymous". Local use only.
import { DurableObject } from "cloudflare:workers";
import { durableMcp, McpServer } from "durable-mcp-server";
import * as z from "zod";

export interface Env {
  TASK_RUNNER: DurableObjectNamespace;
  FLOOR: DurableObjectNamespace<Floor>;
}

/** A step result is JSON of at most 1 MiB, so a string result may carry 1 MiB minus its two quotes. */
const MAX_PAYLOAD = 1_048_574;
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
      let steps = 0;
      for (let i = 0; i < before; i++) steps += await step.do(`before ${i}`, async () => 1);
      await step.sleep("sleep", sleepMs);
      for (let i = 0; i < after; i++) steps += await step.do(`after ${i}`, async () => 1);
      return text({ steps });
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

  return server;
};

const mcp = durableMcp<Env>(createServer);
export const TaskRunner = mcp.TaskRunner;

/**
 * The storage floor: one SQLite Durable Object with a one-column table. Its methods do nothing but what their
 * names say, so their cost is the platform's.
 */
export class Floor extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT NOT NULL)");
  }

  /** A call that touches nothing. */
  ping(): number {
    return 1;
  }

  /**
   * `n` INSERTs with no await between them: they coalesce into one implicit transaction, committed once after
   * the call, and the reply waits for that commit (the output gate). workerd's clock stands still without I/O,
   * so the caller times this from outside.
   */
  insert(n: number, bytes: number): number {
    const value = "x".repeat(bytes);
    for (let i = 0; i < n; i++) this.ctx.storage.sql.exec("INSERT INTO rows (v) VALUES (?)", value);
    return n;
  }

  /** `n` INSERTs, each followed by an awaited storage.sync(): the clock advances at that I/O, so time it here. */
  async insertSynced(n: number, bytes: number): Promise<number[]> {
    const value = "x".repeat(bytes);
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const begin = performance.now();
      this.ctx.storage.sql.exec("INSERT INTO rows (v) VALUES (?)", value);
      await this.ctx.storage.sync();
      times.push(performance.now() - begin);
    }
    return times;
  }
}

const json = (value: unknown) => Response.json(value, { headers: { "cache-control": "no-store" } });
const int = (url: URL, name: string, fallback: number, max: number) => {
  const value = Number(url.searchParams.get(name) ?? fallback);
  return Number.isInteger(value) && value >= 0 && value <= max ? value : fallback;
};

async function floor(url: URL, env: Env): Promise<Response> {
  const named = (name: string) => env.FLOOR.get(env.FLOOR.idFromName(name));
  switch (url.pathname) {
    case "/floor/noop":
      // An HTTP request that reaches the Worker and nothing else.
      return new Response("ok");
    case "/floor/http":
      // An HTTP request that makes one Durable Object call (a warm object, no storage).
      await named("http").ping();
      return new Response("ok");
    case "/floor/http-write": {
      // An HTTP request that creates a new Durable Object and commits one row in it (what tools/call must do).
      await env.FLOOR.get(env.FLOOR.newUniqueId()).insert(1, 0);
      return new Response("ok");
    }
    case "/floor/rpc": {
      // `n` sequential Worker→DO RPCs timed inside the Worker: each is I/O, so the clock advances across it.
      const n = int(url, "n", 100, 10_000);
      const stub = named("rpc");
      await stub.ping();
      const begin = performance.now();
      for (let i = 0; i < n; i++) await stub.ping();
      return json({ n, totalMs: performance.now() - begin });
    }
    case "/floor/insert":
      return json({ n: await named("insert").insert(int(url, "n", 0, 100_000), int(url, "bytes", 0, MAX_PAYLOAD)) });
    case "/floor/insert-synced": {
      const times = await named("synced").insertSynced(int(url, "n", 100, 10_000), int(url, "bytes", 0, MAX_PAYLOAD));
      return json({ n: times.length, times });
    }
    default:
      return new Response("Not found", { status: 404 });
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/mcp") return mcp.serve(request, env);
    if (url.pathname.startsWith("/floor/")) return floor(url, env);
    return new Response("Not found", { status: 404 });
  },
};
