// A 2025-11-25 session (@modelcontextprotocol/sdk 1.x, `initialize` flow) across a crash of the Worker: the whole
// `wrangler dev` process group is SIGKILLed and started again on the same state, and a client that reconnects with
// the session id it had is still served as that session. The demo's e2e server configures no MCP_SESSION_SECRET
// (in CI; a local .dev.vars from `npm start` would set one), so this is the key the deployment generated and keeps
// (docs/clients.md, "The session key"); the bench server's legacy-clients test does the same with a configured secret.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type ElicitRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { WranglerDev } from "@durable-mcp/test-harness";
import { describe, expect, inject, it } from "vitest";

const server = inject("wrangler");

/** A 1.x client that declares elicitation and agrees to send; with `sessionId` it reconnects to that session. */
async function legacyClient(sessionId?: string) {
  const asked: ElicitRequest[] = [];
  const client = new Client({ name: "demo-e2e-2025-restart", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request);
    return { action: "accept", content: { send: true } };
  });
  const transport = new StreamableHTTPClientTransport(new URL(server.url), sessionId ? { sessionId } : {});
  await client.connect(transport);
  return { client, transport, asked };
}

describe("2025-11-25 sessions across a crash of wrangler dev", () => {
  it(
    "honours a session opened before a SIGKILL and restart, with no session secret configured",
    { timeout: 240_000 },
    async () => {
      const before = await legacyClient();
      const sessionId = before.transport.sessionId;
      expect(sessionId).toMatch(/^dmcp-s1\./);
      await before.client.close();

      await WranglerDev.attach(server).restart("SIGKILL");

      const after = await legacyClient(sessionId);
      expect(after.transport.sessionId).toBe(sessionId);
      const created = await after.client.request(
        {
          method: "tools/call",
          params: {
            name: "send_report",
            arguments: { to: "erin@example.com", pages: 1, secondsPerPage: 0 },
            task: { ttl: 600_000 },
          },
        },
        CreateTaskResultSchema,
      );
      // The session's declared elicitation lets the task ask: the question reaches this client's handler, once.
      const result = await after.client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
      expect(after.asked).toHaveLength(1);
      expect(after.asked[0]!.params.message).toBe("Send the 1-page report to erin@example.com?");
      expect(result.isError ?? false).toBe(false);
      expect(result.content).toEqual([{ type: "text", text: "Sent 1 pages to erin@example.com." }]);
      await after.client.close();
    },
  );
});
