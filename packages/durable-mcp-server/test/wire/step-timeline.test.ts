// Through durable-mcp-server/testing: its `get()` asks for the timeline, its raw client's `getTask` does not.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { STEPS_META } from "../../src/index.js";
import { RpcError, testTasks, type StepTimelineEntry } from "../../src/testing/index.js";
import type { FixtureEnv } from "../fixtures/worker.js";

const asCaller = (path: string, principal: string) =>
  testTasks({
    url: `http://fixture.test${path}`,
    binding: (env as unknown as FixtureEnv).MCP_TASK_RUNNER,
    principal,
    headers: { authorization: `Bearer ${principal}` },
  });

describe("step timeline", () => {
  for (const path of ["/mcp", "/mcp-sdk"]) {
    it(`comes with tasks/get when the request asks for it (${path})`, async () => {
      const kit = asCaller(path, "alice");
      const task = await kit.start("send_report", { to: "ada@example.com", pages: 2 });
      const done = await task.waitFor("completed");
      const plain = await kit.client.getTask(task.id);
      expect(plain._meta?.[STEPS_META]).toBeUndefined();

      const timeline = done._meta?.[STEPS_META] as unknown as { total: number; steps: StepTimelineEntry[] };
      expect(timeline.total).toBe(3);
      expect(timeline.steps.map((step) => step.name)).toEqual(["build", "cool-down", "send"]);
      for (const step of timeline.steps) {
        expect(step).toMatchObject({ state: "done", startedAt: expect.any(String), updatedAt: expect.any(String) });
        expect(step.durationMs).toBeGreaterThanOrEqual(0);
        expect(Date.parse(step.updatedAt) - Date.parse(step.startedAt!)).toBe(step.durationMs);
      }
      expect(timeline.steps.map((step) => step.kind)).toEqual(["do", "sleep", "do"]);
      expect(timeline.steps[0]!.attempts).toBe(1);
      // The 20 ms sleep lasted at least that long.
      expect(timeline.steps[1]!.durationMs).toBeGreaterThanOrEqual(20);
      // Another principal learns nothing, timeline or not.
      const foreign = await asCaller(path, "mallory")
        .task(task.id)
        .get()
        .catch((error: Error) => error.cause);
      expect(foreign).toBeInstanceOf(RpcError);
      expect((foreign as RpcError).error).toMatchObject({ code: -32602 });
    });
  }
});
