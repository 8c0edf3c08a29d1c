// The demo Worker (`npm start`): durable report tasks, mounted by hand inside a Hono app beside other routes.
import { durableMcp, McpServer, NonRetryableError } from "durable-mcp-server";
import { Hono } from "hono";
import * as z from "zod";

interface Env {
  TASK_RUNNER: DurableObjectNamespace;
}

const createServer = (_env: Env) => {
  const server = new McpServer({ name: "reports", version: "1.0.0" });

  server.registerTool("ping", { description: "Answers at once", inputSchema: z.object({}) }, async () => ({
    content: [{ type: "text", text: "pong" }],
  }));

  server.registerTask(
    "send_report",
    {
      description: "Renders a multi-page report, asks for confirmation, then sends it",
      inputSchema: z.object({
        to: z.string().email(),
        pages: z.number().int().min(1).max(50).default(5),
        secondsPerPage: z.number().min(0).max(60).default(1),
      }),
      pollInterval: "1 second",
    },
    async ({ to, pages, secondsPerPage }, step) => {
      const rendered: string[] = [];
      for (let page = 1; page <= pages; page++) {
        // Each page is journaled: after an eviction or deploy the task resumes at the first unfinished page.
        rendered.push(
          await step.do(
            `render page ${page}`,
            { retries: { limit: 3, delay: "2 seconds", backoff: "exponential" } },
            async () => {
              await new Promise((resolve) => setTimeout(resolve, secondsPerPage * 1000));
              return `page ${page} of ${pages}`;
            },
          ),
        );
        await step.status(`rendered ${page}/${pages} pages`, { progress: page / pages });
      }
      const answer = await step.elicit(
        "confirm send",
        {
          message: `Send the ${pages}-page report to ${to}?`,
          requestedSchema: {
            type: "object",
            properties: { send: { type: "boolean", title: "Send it" } },
            required: ["send"],
          },
        },
        { timeout: "1 hour" },
      );
      if (answer.action !== "accept" || answer.content?.send !== true) {
        return { content: [{ type: "text", text: `Report not sent (${answer.action}).` }] };
      }
      const receipt = await step.do("send", async ({ idempotencyKey }) => {
        if (to.endsWith("@invalid.example")) throw new NonRetryableError(`mailbox ${to} does not exist`);
        return { messageId: idempotencyKey, pages: rendered.length };
      });
      return {
        content: [{ type: "text", text: `Sent ${receipt.pages} pages to ${to}.` }],
        structuredContent: receipt,
      };
    },
  );

  return server;
};

const mcp = durableMcp(createServer);

export const TaskRunner = mcp.TaskRunner;

const app = new Hono<{ Bindings: Env }>();
app.get("/", (c) => c.text("durable-mcp-server demo. MCP endpoint: POST /mcp\n"));
app.get("/healthz", (c) => c.json({ ok: true }));
app.all("/mcp", (c) => mcp.serve(c.req.raw, c.env));

export default app;
