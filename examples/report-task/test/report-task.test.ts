import { SELF } from "cloudflare:test";
import { TaskKitError, testTasks } from "durable-mcp-server/testing";
import { describe, expect, it } from "vitest";

// Drives the Worker's own default export; without `authenticate` its defaults serve loopback Hosts only, which is
// what the kit calls.
const tasks = testTasks();

describe("build_report", () => {
  it("returns a task at once and completes after a retried step and a durable sleep", async () => {
    // An hour's cool-down: the test does not wait for it, the kit makes it due.
    const task = await tasks.start("build_report", { region: "emea", coolDown: 60_000 });
    expect((await task.get()).status).toBe("working");
    await task.waitForStep("cool down", "waiting");
    expect(await task.steps()).toMatchObject([
      { name: "fetch figures", state: "done", attempts: 2 },
      { name: "cool down", kind: "sleep", state: "waiting" },
    ]);
    expect(await task.wake()).toEqual(["cool down"]);
    expect(await task.waitFor("completed")).toMatchObject({
      statusMessage: "fetched figures for emea",
      result: {
        content: [{ type: "text", text: "# emea\nRevenue: 4000" }],
        structuredContent: { region: "emea", revenue: 4000 },
      },
    });
  });

  it("replays from its journal after its TaskRunner is evicted", async () => {
    const task = await tasks.start("build_report", { region: "latam", coolDown: 60_000, flakyAttempts: 0 });
    await task.waitForStep("cool down", "waiting");
    await task.evict();
    await task.wake();
    const done = await task.waitFor("completed");
    expect(done.result).toMatchObject({ structuredContent: { region: "latam", revenue: 5000 } });
    expect(await task.steps()).toMatchObject([{ name: "fetch figures", attempts: 1 }, {}, { name: "render" }]);
  });

  it("reports a step that keeps failing as a repairable tool error", async () => {
    // The upstream's failure injected by step name: the step fails as if every retry had.
    const task = await tasks.start(
      "build_report",
      { region: "apac" },
      { inject: { "fetch figures": { error: { message: "upstream timeout for apac" } } } },
    );
    expect(await task.waitFor("completed")).toMatchObject({
      result: {
        isError: true,
        structuredContent: {
          error: {
            code: "step_failed",
            retryable: true,
            message: "upstream timeout for apac",
            details: { step: "fetch figures" },
          },
        },
      },
    });
  });

  it("refuses invalid arguments without starting a task", async () => {
    const refused: unknown = await tasks.start("build_report", { region: "" }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TaskKitError);
    expect((refused as TaskKitError).result).toMatchObject({ isError: true });
    expect((refused as TaskKitError).result).not.toHaveProperty("taskId");
  });
});

describe("the starter's defaults", () => {
  it("refuse a Host that is not loopback, until the Worker lists it in allowedHosts", async () => {
    const response = await SELF.fetch("https://report-task.example.workers.dev/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(response.status).toBe(403);
  });
});
