// The replay check before a deploy (docs/testing.md, "Check a deploy against real histories"): a task's history,
// exported from a real run and committed (test/histories/), replayed against the current handler without running any
// step body. Keep adding histories of tasks that are live in production when you change the handler.
import { env } from "cloudflare:test";
import { durableMcp } from "durable-mcp-server";
import { replayHistory, testTasks, type TaskHistory } from "durable-mcp-server/testing";
import { describe, expect, it } from "vitest";
import { createServer, type Env } from "../src/server.js";
import committed from "./histories/build_report.json";

const history = committed as TaskHistory;
const tasks = testTasks();

describe("build_report histories", () => {
  it("the committed history is what a real run exports (mcp.exportHistory)", async () => {
    const task = await tasks.start("build_report", { region: "emea", coolDown: 60_000 });
    await task.waitForStep("cool down", "waiting");
    await task.wake();
    await task.waitFor("completed");
    const exported = await durableMcp(createServer).exportHistory(env as Env, task.id, { trustedSender: true });
    expect({ ...exported, exportedAt: history.exportedAt }).toEqual(history);
  });

  it("replays on the current handler", async () => {
    expect(await replayHistory(createServer(env as Env), history)).toEqual({ compatible: true });
  });
});
