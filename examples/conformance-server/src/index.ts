import { inputRequired, type ServerContext } from "@modelcontextprotocol/server";
import { durableMcp, McpServer, TaskProtocolError } from "durable-mcp-server";
import * as z from "zod";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
const lenient = (properties: Record<string, unknown>) => ({ type: "object" as const, properties });

const createServer = () => {
  const server = new McpServer({ name: "durable-mcp-conformance", version: "0.1.0" });

  server.registerTool(
    "greet",
    { description: "Says hello", inputSchema: z.object({ name: z.string() }) },
    async ({ name }) => text(`Hello, ${name}!`),
  );

  server.registerTask(
    "slow_compute",
    {
      // The default fallback ("wait"): clients without the extension get the result inline, or a handle.
      description: "Works for `seconds`; runs as a task when the client supports tasks, inline otherwise",
      inputSchema: z.object({ seconds: z.number().min(0).max(3600), label: z.string().optional() }),
      pollInterval: 200,
    },
    async ({ seconds, label }, step) => {
      await step.status(`computing ${label ?? ""}`.trim());
      await step.sleep("compute", seconds * 1000);
      return text(`computed ${label ?? "result"} after ${seconds}s`);
    },
  );

  server.registerTask(
    "failing_job",
    { description: "Always ends in a tool error", inputSchema: z.object({}), fallback: "refuse", pollInterval: 200 },
    async (_input, step) => {
      await step.sleep("warm-up", 300);
      throw new Error("failing_job always fails");
    },
  );

  server.registerTask(
    "protocol_error_job",
    {
      description: "Always ends failed with a JSON-RPC error",
      inputSchema: z.object({}),
      fallback: "refuse",
      pollInterval: 200,
    },
    async () => {
      throw new TaskProtocolError(-32603, "protocol_error_job: internal error");
    },
  );

  server.registerTask(
    "confirm_delete",
    {
      description: "Asks before deleting a file",
      inputSchema: z.object({ filename: z.string() }),
      fallback: "refuse",
      pollInterval: 200,
    },
    async ({ filename }, step) => {
      const answer = await step.elicit("confirm", {
        message: `Delete ${filename}?`,
        requestedSchema: { ...lenient({ confirm: { type: "boolean" } }), required: ["confirm"] },
      });
      const confirmed = answer.action === "accept" && answer.content?.confirm === true;
      return text(confirmed ? `deleted ${filename}` : `kept ${filename}`);
    },
  );

  server.registerTask(
    "multi_input",
    { description: "Asks two questions at once", inputSchema: z.object({}), fallback: "refuse", pollInterval: 100 },
    async (_input, step) => {
      const schema = lenient({ name: { type: "string" }, confirm: { type: "boolean" } });
      const [first, second] = await Promise.all([
        step.elicit("first", { message: "First answer?", requestedSchema: schema }),
        step.elicit("second", { message: "Second answer?", requestedSchema: schema }),
      ]);
      return text(`answers: ${JSON.stringify([first.content?.name, second.content?.name])}`);
    },
  );

  server.registerTask(
    "test_tool_with_task",
    {
      description: "Asks for a name in a synchronous input round, then runs a task with it",
      inputSchema: z.object({ name: z.string().optional() }),
      fallback: "refuse",
      pollInterval: 200,
      beforeStart: (input, ctx: ServerContext) => {
        const answer = ctx.mcpReq.inputResponses?.user_name as
          | { action?: string; content?: { name?: unknown } }
          | undefined;
        if (answer?.action === "accept" && typeof answer.content?.name === "string")
          return { input: { name: answer.content.name } };
        return inputRequired({
          inputRequests: {
            user_name: inputRequired.elicit({
              message: "What is your name?",
              requestedSchema: z.object({ name: z.string() }),
            }),
          },
          requestState: "awaiting-name",
        });
      },
    },
    async ({ name }, step) => {
      const greeting = await step.do("greet", async () => `Hello, ${name}! Your task is done.`);
      return text(greeting);
    },
  );

  // Diagnostic fixtures of the server-stateless scenario.
  server.registerTool(
    "test_missing_capability",
    { description: "Needs sampling", inputSchema: z.object({}) },
    async () =>
      inputRequired({
        inputRequests: {
          sample: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "hi" } }],
            maxTokens: 16,
          }),
        },
      }),
  );
  server.registerTool(
    "test_streaming_elicitation",
    { description: "Asks through input_required", inputSchema: z.object({}) },
    async () =>
      inputRequired({
        inputRequests: {
          ask: inputRequired.elicit({
            message: "Anything?",
            requestedSchema: z.object({ answer: z.string().optional() }),
          }),
        },
      }),
  );
  server.registerTool(
    "test_logging_tool",
    { description: "Logs only when asked to", inputSchema: z.object({}) },
    async () => text("no log level, no logs"),
  );
  server.registerTool(
    "test_trigger_tool_change",
    { description: "Announces a tool list change", inputSchema: z.object({}) },
    async () => {
      app.handler.notify.toolsChanged();
      return text("tools changed");
    },
  );

  return server;
};

const app = durableMcp(createServer);

export const TaskRunner = app.TaskRunner;
export default { fetch: app.fetch } satisfies ExportedHandler;
