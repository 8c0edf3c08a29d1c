// The deploy suite's Worker (test/deploy.test.ts): task code that the suite edits between two starts of
// `wrangler dev` on the same local state, as a deploy would change it under tasks in flight. The suite serves a copy
// of this file and rewrites lines of it by their exact text (it fails when a line it edits is not here), so the
// lines marked "edited by the deploy suite" must stay as they are. Every step body reports its execution to the
// counter service (COUNTER_URL) with its step name, job and idempotency key, so the suite counts body runs.
import { durableMcp, McpServer, type StepAttempt } from "durable-mcp-server";
import * as z from "zod";

export interface Env {
  TASK_RUNNER: DurableObjectNamespace;
  /** Base URL of the counter service (empty: steps report nowhere). */
  COUNTER_URL: string;
  /** Which `wrangler dev` instance runs this code; reported with every effect. */
  INSTANCE: string;
}

const args = z.object({ job: z.string().min(1).max(128), pauseMs: z.number().int().min(0).max(600_000) });

const createServer = (env: Env) => {
  const server = new McpServer({ name: "reliability-lab-deploy", version: "0.1.0" });
  /** A step body: reports this execution, then returns the step's name. */
  const effect =
    (job: string, step: string) =>
    async ({ attempt, idempotencyKey, signal }: StepAttempt): Promise<string> => {
      if (env.COUNTER_URL) {
        const response = await fetch(`${env.COUNTER_URL}/hit`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": idempotencyKey },
          body: JSON.stringify({ key: idempotencyKey, job, step, attempt, instance: Number(env.INSTANCE) }),
          signal,
        });
        await response.body?.cancel();
        if (!response.ok) throw new Error(`counter answered HTTP ${response.status}`);
      }
      return step;
    };
  const options = { inputSchema: args, fallback: "refuse" as const, pollInterval: 200 };

  // A finished step, a sleep, a step after it: the suite renames the first one under a sleeping task.
  server.registerTask("rename_job", options, async ({ job, pauseMs }, step) => {
    const path = [await step.do("first", effect(job, "first"))]; // edited by the deploy suite
    await step.sleep("pause", pauseMs);
    path.push(await step.do("last", effect(job, "last")));
    return { content: [{ type: "text", text: path.join(",") }] };
  });

  // The suite wraps the second step in a patch marker: new tasks take "b2", tasks past that point keep "b".
  server.registerTask("patch_job", options, async ({ job, pauseMs }, step) => {
    const path = [await step.do("a", effect(job, "a"))];
    path.push(await step.do("b", effect(job, "b"))); // edited by the deploy suite
    await step.sleep("pause", pauseMs);
    path.push(await step.do("c", effect(job, "c")));
    return { content: [{ type: "text", text: path.join(",") }] };
  });

  // Workflows-style: one step name used five times, across a sleep.
  server.registerTask("repeat_job", options, async ({ job, pauseMs }, step) => {
    const results: string[] = [];
    for (let i = 0; i < 5; i++) {
      results.push(await step.do("same name", effect(job, "same name")));
      if (i === 2) await step.sleep("pause", pauseMs);
    }
    return { content: [{ type: "text", text: results.join(",") }] };
  });

  return server;
};

const mcp = durableMcp<Env>(createServer);
export const TaskRunner = mcp.TaskRunner;
export default {
  fetch: (request: Request, env: Env, ctx: ExecutionContext) => mcp.fetch(request, env, ctx),
} satisfies ExportedHandler<Env>;
