// The task server Worker (`npm start`, root wrangler.jsonc): MCP at /mcp, files at /files, the task page at /, and
// the page's agent (TaskWatcher, the page's MCP client: apps/demo-client/agent) at /agents/task-watcher/<session>,
// mounted by hand inside a Hono app beside other routes.
import { routeTaskWatcher, serveOwnOriginWith, TaskWatcher, WatcherClients } from "demo-client/agent";
import { durableMcp } from "durable-mcp-server";
import { Hono } from "hono";
import { authenticate } from "./auth.js";
import { createServer, type Env } from "./server.js";

const mcp = durableMcp(createServer, { authenticate, files: { maxSize: 1024 * 1024 * 1024 } });

export const TaskRunner = mcp.TaskRunner;
export const FileRunner = mcp.FileRunner;
export const TaskIndex = mcp.TaskIndex;
export { TaskWatcher, WatcherClients };

const app = new Hono<{ Bindings: Env }>();
// With the task page built (`npm start` does), the static assets answer "/" before this route is reached.
app.get("/", (c) =>
  c.text(
    "durable-mcp-server task server. MCP endpoint: POST /mcp\nThe task page is not built: `npm start` builds it.\n",
  ),
);
app.get("/healthz", (c) => c.json({ ok: true }));
app.all("/mcp", (c) => mcp.serve(c.req.raw, c.env));
app.all("/files", (c) => mcp.serveFiles(c.req.raw, c.env));
app.all("/files/*", (c) => mcp.serveFiles(c.req.raw, c.env));
// Only the page's agent (and POST /agents/session, which opens its session): other Durable Objects of this Worker are
// not reachable under /agents. The agent's gate checks origin, name and session secret first (agent/session.ts).
app.all("/agents/*", async (c) => (await routeTaskWatcher(c.req.raw, { ...c.env })) ?? c.notFound());

// The agent calls a server URL on this Worker's own origin through this handler, in-process: a Worker may not
// fetch itself.
serveOwnOriginWith((request, env) => app.fetch(request, env as Env));

export default app;
