// A durable MCP task Worker: the task is in src/server.ts; this wires it to Workers and Durable Objects.
import { durableMcp } from "durable-mcp-server";
import { createServer, type Env } from "./server.js";

export type { Env };

// Without `authenticate`, only loopback Hosts are served (DNS-rebinding protection): fine under `wrangler dev`.
// A deployed Worker without `authenticate` must set `allowedHosts` to the hostnames it is reached at, e.g.
// durableMcp(createServer, { allowedHosts: ["report-task.example.workers.dev"] }), or every request gets a 403.
const mcp = durableMcp(createServer);

export const TaskRunner = mcp.TaskRunner;
export default { fetch: mcp.fetch } satisfies ExportedHandler<Env>;
