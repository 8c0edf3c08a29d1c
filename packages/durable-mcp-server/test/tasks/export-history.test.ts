// mcp.exportHistory / TaskRunnerRpc.exportHistory on real TaskRunner objects: the journal as a history document
// (steps, occurrences, results, answers; spilled results read back from R2; never the step-key salt), and every refusal.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { TaskHistoryError } from "../../src/errors/history-errors.js";
import { newTaskId } from "../../src/ids.js";
import { MAX_HISTORY_BYTES } from "../../src/limits.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { exportTaskHistory, type ExportHistoryOptions } from "../../src/tasks/export-history.js";
import { callTaskUntil, final } from "../jsonrpc.js";
import { wireApp } from "../fixtures/mcp-server.js";
import { fixtureEnv, isFinal, startTask, waitForTask } from "../helpers.js";

const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TaskHistoryError);
  return (error as TaskHistoryError).problem;
}

describe("exportHistory", () => {
  it("gives a finished task's steps with their occurrences, kinds and results, and never its step-key salt", async () => {
    const started = await startTask("three_steps");
    await waitForTask(started, isFinal);
    const history = await exportTaskHistory(runners, started.taskId, { principal: "alice" });
    expect(history).toMatchObject({
      format: "durable-mcp-server/history",
      version: 1,
      tool: "three_steps",
      input: { probe: started.probeName },
    });
    expect(Date.parse(history.exportedAt)).not.toBeNaN();
    expect(history.steps).toEqual([
      { name: "a", occurrence: 1, kind: "do", state: "done", result: 1, error: null, attempts: 1 },
      { name: "pause-1", occurrence: 1, kind: "sleep", state: "done", error: null, attempts: 0 },
      { name: "b", occurrence: 1, kind: "do", state: "done", result: 2, error: null, attempts: 1 },
      { name: "pause-2", occurrence: 1, kind: "sleep", state: "done", error: null, attempts: 0 },
      { name: "c", occurrence: 1, kind: "do", state: "done", result: { total: 4 }, error: null, attempts: 1 },
    ]);
    const salt = await runInDurableObject(
      started.stub,
      (_, state) => state.storage.sql.exec<{ salt: string }>("SELECT step_key_salt AS salt FROM task").one().salt,
    );
    expect(salt.length).toBeGreaterThan(0);
    expect(JSON.stringify(history)).not.toContain(salt);
    expect(JSON.stringify(history)).not.toContain("idempotency");
  });

  it("gives questions with what they asked, and answers as results", async () => {
    const started = await startTask("asks");
    await waitForTask(started, (task) => task.status === "input_required");
    await started.stub.update(started.access, { name: { action: "accept", content: { name: "Ada" } } });
    const history = await exportTaskHistory(runners, started.taskId, { trustedSender: true });
    const byName = new Map(history.steps.map((step) => [step.name, step]));
    expect(byName.get("name")).toMatchObject({
      kind: "input",
      state: "done",
      result: { action: "accept", content: { name: "Ada" } },
      request: { method: "elicitation/create" },
    });
    expect(byName.get("color")).toMatchObject({
      kind: "input",
      state: "waiting",
      request: { method: "elicitation/create" },
    });
    expect(byName.get("color")).not.toHaveProperty("result");
  });

  it("includes a result spilled to R2, read back (mcp.exportHistory)", async () => {
    const { task } = await callTaskUntil("big_result", { kib: 1024 }, final);
    expect(task.status).toBe("completed");
    const history = await wireApp.exportHistory(fixtureEnv, task.taskId, { trustedSender: true });
    const big = history.steps.find((step) => step.name === "big")!;
    expect(typeof big.result).toBe("string");
    expect((big.result as string).length).toBeGreaterThan(1_048_576);
    expect(JSON.stringify(history)).not.toContain("@r2:");
  });

  it("refuses a history over MAX_HISTORY_BYTES as too_large", async () => {
    const started = await startTask("three_steps");
    await waitForTask(started, isFinal);
    // Rows of a journal larger than the limit (each under SQLite's 2 MB row), as many long steps would leave.
    const rows = Math.ceil(MAX_HISTORY_BYTES / 1_900_000) + 1;
    await runInDurableObject(started.stub, (_, state) => {
      const value = JSON.stringify("x".repeat(1_900_000));
      for (let i = 1; i <= rows; i++) {
        state.storage.sql.exec(
          "INSERT INTO steps (name, occurrence, kind, state, attempts, result, updated_at) VALUES (?, 1, 'do', 'done', 1, ?, 0)",
          `big-${i}`,
          value,
        );
      }
    });
    const problem = await exportTaskHistory(runners, started.taskId, { trustedSender: true }).then(
      () => null,
      (error: unknown) => error as TaskHistoryError,
    );
    expect(problem).toBeInstanceOf(TaskHistoryError);
    expect(problem!.problem).toBe("too_large");
    expect(problem!.message).toMatch(/^the history of task .* bytes; at most 16777216 are exported$/);
  });

  it("refuses an unknown task, another principal's, and an id of the wrong shape as unknown_task", async () => {
    const started = await startTask("three_steps");
    await waitForTask(started, isFinal);
    expect(await refusal(exportTaskHistory(runners, started.taskId, { principal: "mallory" }))).toBe("unknown_task");
    expect(await refusal(exportTaskHistory(runners, newTaskId(), { trustedSender: true }))).toBe("unknown_task");
    expect(await refusal(exportTaskHistory(runners, "not an id", { trustedSender: true }))).toBe("unknown_task");
    expect(await refusal(wireApp.exportHistory(fixtureEnv, newTaskId(), { principal: "alice" }))).toBe("unknown_task");
  });

  it("needs whose task it may read: a principal or trustedSender, not neither nor both", async () => {
    const started = await startTask("three_steps");
    await waitForTask(started, isFinal);
    for (const options of [{}, { principal: "alice", trustedSender: true }, { trustedSender: "yes" }]) {
      await expect(
        exportTaskHistory(runners, started.taskId, options as unknown as ExportHistoryOptions),
      ).rejects.toThrow(/exportHistory needs whose task it may read/);
    }
  });
});
