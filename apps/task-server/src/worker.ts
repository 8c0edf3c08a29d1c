// The task server Worker (`npm start`, root wrangler.jsonc): MCP at /mcp, files at /files, the task page at /, the
// operator API at /operator and its console at /ops, and the page's agent (TaskWatcher, the page's MCP client:
// apps/demo-client/agent) at /agents/task-watcher/<session>, mounted by hand inside a Hono app beside other routes.
import { routeTaskWatcher, serveOwnOriginWith, TaskWatcher, WatcherClients } from "demo-client/agent";
import { durableMcp, EventRefusedError, type EventRefusal, type WaitUntil } from "durable-mcp-server";
import { serveConsole } from "durable-mcp-server/console";
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import { authenticate } from "./auth.js";
import { createServer, type Env } from "./server.js";

// Webhook links are signed with the files secret: one secret to configure, and the two sign different messages.
const mcp = durableMcp(createServer, {
  authenticate,
  files: { maxSize: 1024 * 1024 * 1024 },
  webhooks: { secret: "FILE_URL_SECRET" },
  // The operator API (docs/operations.md): with the OPERATOR_TOKEN secret set, that token; without it, loopback only.
  operator: { token: "OPERATOR_TOKEN" },
  // One shared named limit (export_contacts names it), roomy enough that the demo never queues on it.
  limits: { named: { "archive-uploads": { concurrent: 20 } } },
});

export const TaskRunner = mcp.TaskRunner;
export const FileRunner = mcp.FileRunner;
export const TaskIndex = mcp.TaskIndex;
export const TaskLimiter = mcp.TaskLimiter;
export { TaskWatcher, WatcherClients };

const app = new Hono<{ Bindings: Env; Variables: { principal: string } }>();
// With the task page built (`npm start` does), the static assets answer "/" before this route is reached.
app.get("/", (c) =>
  c.text(
    "durable-mcp-server task server. MCP endpoint: POST /mcp\nThe task page is not built: `npm start` builds it.\n",
  ),
);
app.get("/healthz", (c) => c.json({ ok: true }));
// The execution context lets creates use TaskRunners prepared after an earlier reply (docs/api.md). The page's agent
// calls this app in-process without one (below), and Hono's getter throws then: those creates make their object.
app.all("/mcp", (c) => mcp.serve(c.req.raw, c.env, executionContextOf(c)));
app.all("/files", (c) => mcp.serveFiles(c.req.raw, c.env));
app.all("/files/*", (c) => mcp.serveFiles(c.req.raw, c.env));
app.all("/webhooks/*", (c) => mcp.serveWebhooks(c.req.raw, c.env));
app.all("/operator", (c) => mcp.serveOperator(c.req.raw, c.env, executionContextOf(c)));
app.all("/operator/*", (c) => mcp.serveOperator(c.req.raw, c.env, executionContextOf(c)));
// The operator console (durable-mcp-server/console): one page over the operator API above, asking for the operator
// token when the API needs one.
const opsConsole = (c: Context) => serveConsole(c.req.raw, { path: "/ops", operatorPath: "/operator" }) ?? c.notFound();
app.all("/ops", opsConsole);
app.all("/ops/", opsConsole);
// Outside systems approve `await_approval` here: `POST /events/<taskId>` with `{ type, payload }` and the caller's own
// bearer token. This route is the Worker's trusted code calling mcp.sendEvent, bound to the caller's principal.
// The body is bounded before it is read: sendEvent refuses a payload over 256 KiB, and `{ type, payload }` around it
// needs little more, so anything over 512 KiB is 413 without being buffered.
const EVENT_BODY_LIMIT = 512 * 1024;
app.post(
  "/events/:taskId",
  async (c, next) => {
    const caller = authenticate(c.req.raw, c.env);
    if (caller instanceof Response) return caller;
    c.set("principal", caller.principal);
    return next();
  },
  bodyLimit({
    maxSize: EVENT_BODY_LIMIT,
    onError: (c) => c.json({ error: "payload_too_large", message: `The body is over ${EVENT_BODY_LIMIT} bytes` }, 413),
  }),
  async (c) => {
    let body: { type?: unknown; payload?: unknown } | null;
    try {
      body = await c.req.json();
    } catch {
      return c.json({ error: "invalid_json", message: "Send { type, payload } as JSON" }, 400);
    }
    try {
      const event = { type: body?.type as string, payload: body?.payload };
      return c.json(await mcp.sendEvent(c.env, c.req.param("taskId"), event, { principal: c.get("principal") }), 202);
    } catch (error) {
      if (!(error instanceof EventRefusedError)) throw error;
      return c.json({ error: error.reason, message: error.message }, EVENT_REFUSAL_STATUS[error.reason]);
    }
  },
);
// Only the page's agent (and POST /agents/session, which opens its session): other Durable Objects of this Worker are
// not reachable under /agents. The agent's gate checks origin, name and session secret first (agent/session.ts).
app.all("/agents/*", async (c) => (await routeTaskWatcher(c.req.raw, { ...c.env })) ?? c.notFound());

// The agent calls a server URL on this Worker's own origin through this handler, in-process: a Worker may not
// fetch itself.
serveOwnOriginWith((request, env) => app.fetch(request, env as Env));

const EVENT_REFUSAL_STATUS: Record<EventRefusal, 400 | 404 | 409 | 413 | 429> = {
  unknown_task: 404,
  task_finished: 409,
  buffer_full: 429,
  payload_too_large: 413,
  invalid_event: 400,
};

function executionContextOf(c: Context): WaitUntil | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

export default app;
