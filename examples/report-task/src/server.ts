// The task: a step, a durable sleep, and a step that is retried until it succeeds. Its own module so that tests can
// build the server too (the replay check in test/replay-history.test.ts); src/index.ts serves it.
import { McpServer } from "durable-mcp-server";
import * as z from "zod";

export interface Env {
  TASK_RUNNER: DurableObjectNamespace;
}

/** Stands in for a flaky upstream: fails the first `failures` attempts of each call. */
async function fetchFigures(region: string, attempt: number, failures: number) {
  if (attempt <= failures) throw new Error(`upstream timeout for ${region} (attempt ${attempt})`);
  return { region, revenue: region.length * 1000 };
}

export const createServer = (_env: Env) => {
  const server = new McpServer({ name: "report-task", version: "1.0.0" });
  server.registerTask(
    "build_report",
    {
      description: "Builds a revenue report for a region",
      inputSchema: z.object({
        region: z.string().min(1),
        coolDown: z.number().int().min(0).max(60_000).default(1_000),
        flakyAttempts: z.number().int().min(0).max(10).default(1),
      }),
    },
    async ({ region, coolDown, flakyAttempts }, step) => {
      // Retried with back-off that waits on the Durable Object's alarm, not in memory.
      const figures = await step.do(
        "fetch figures",
        { retries: { limit: 3, delay: "100 milliseconds", backoff: "exponential" } },
        async ({ attempt }) => fetchFigures(region, attempt, flakyAttempts),
      );
      await step.status(`fetched figures for ${region}`);
      // Nothing stays in memory while the task sleeps; the alarm wakes it up.
      await step.sleep("cool down", coolDown);
      const report = await step.do("render", async () => `# ${region}\nRevenue: ${figures.revenue}`);
      return { content: [{ type: "text", text: report }], structuredContent: figures };
    },
  );
  return server;
};
