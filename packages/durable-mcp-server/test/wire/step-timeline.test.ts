import { describe, expect, it } from "vitest";
import { STEPS_META } from "../../src/index.js";
import { callTaskUntil, envelope, final, rpc } from "../jsonrpc.js";

const withTimeline = { _meta: { ...envelope(true), [STEPS_META]: true } };

describe("step timeline", () => {
  for (const path of ["/mcp", "/mcp-sdk"]) {
    it(`comes with tasks/get when the request asks for it (${path})`, async () => {
      const { task } = await callTaskUntil("send_report", { to: "ada@example.com", pages: 2 }, final, { path });
      expect(task.status).toBe("completed");
      const plain = (await rpc("tasks/get", { taskId: task.taskId }, { path })).body.result!;
      expect(plain._meta?.[STEPS_META]).toBeUndefined();

      const reply = await rpc("tasks/get", { taskId: task.taskId, ...withTimeline }, { path });
      const timeline = reply.body.result!._meta[STEPS_META];
      expect(timeline.total).toBe(3);
      expect(timeline.steps.map((step: { name: string }) => step.name)).toEqual(["build", "cool-down", "send"]);
      for (const step of timeline.steps) {
        expect(step).toMatchObject({ state: "done", startedAt: expect.any(String), updatedAt: expect.any(String) });
        expect(step.durationMs).toBeGreaterThanOrEqual(0);
        expect(Date.parse(step.updatedAt) - Date.parse(step.startedAt)).toBe(step.durationMs);
      }
      expect(timeline.steps.map((step: { kind: string }) => step.kind)).toEqual(["do", "sleep", "do"]);
      expect(timeline.steps[0].attempts).toBe(1);
      // The 20 ms sleep lasted at least that long.
      expect(timeline.steps[1].durationMs).toBeGreaterThanOrEqual(20);
      // Another principal learns nothing, timeline or not.
      const foreign = await rpc("tasks/get", { taskId: task.taskId, ...withTimeline }, { path, principal: "mallory" });
      expect(foreign.body.error?.code).toBe(-32602);
    });
  }
});
