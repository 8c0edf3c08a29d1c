// durable-mcp-server/testing against the real runtime: the fixture Worker over its default export, real TaskRunner
// objects, their alarms and evictions. `kit_report`'s "fetch" step always fails with an hour's back-off and "rest"
// sleeps an hour, so nothing here finishes unless the kit makes it.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { TESTING_SEAM } from "../../src/runner/testing-seam.js";
import { TaskKitError, testTasks, withTestingSeam, type Exchange } from "../../src/testing/index.js";
import type { FixtureEnv } from "../fixtures/worker.js";
import { STEPS_META } from "../../src/wire/meta-keys.js";
import type { StepTimelineEntry } from "../../src/steps/step-record.js";

const fixtureEnv = env as unknown as FixtureEnv;

// The wire fixture authenticates a bearer token as its principal.
const kit = testTasks({
  url: "http://fixture.test/mcp",
  binding: fixtureEnv.MCP_TASK_RUNNER,
  principal: "alice",
  headers: { authorization: "Bearer alice" },
});

function textOf(task: { result?: { content?: Array<{ text?: string }> } }): string | undefined {
  return task.result?.content?.[0]?.text;
}

describe("testTasks with repeated step names", () => {
  it("names a repeated step's later uses name#n: wait for, wake and inject them by that label", async () => {
    const task = await kit.start("kit_pages", {}, { inject: { "page#2": { result: "mocked 2" } } });
    await task.waitForStep("rest", "waiting");
    // An outcome injected ahead of the handler is kept apart from the journal until the handler reaches its step.
    expect((await task.steps()).map((step) => [step.name, step.occurrence])).toEqual([
      ["page", 1],
      ["rest", 1],
    ]);
    await runInDurableObject(
      fixtureEnv.MCP_TASK_RUNNER.get(fixtureEnv.MCP_TASK_RUNNER.idFromName(task.id)),
      (_, state) => {
        const injected = state.storage.sql.exec("SELECT name, occurrence, state FROM injected_steps").toArray();
        expect(injected).toEqual([{ name: "page", occurrence: 2, state: "done" }]);
      },
    );
    expect(await task.wake("rest")).toEqual(["rest"]);
    await task.waitForStep("rest#2", "waiting");
    expect(await task.wake()).toEqual(["rest#2"]);
    await task.waitForStep("rest#3", "waiting");
    expect(await task.wake("rest#3")).toEqual(["rest#3"]);
    expect(textOf(await task.waitFor("completed"))).toBe("real 1,mocked 2,real 3");
    // The injected outcome is journaled where the handler reached its step, not ahead of the handler.
    expect((await task.steps()).map((step) => [step.name, step.occurrence, step.kind])).toEqual([
      ["page", 1, "do"],
      ["rest", 1, "sleep"],
      ["page", 2, "do"],
      ["rest", 2, "sleep"],
      ["page", 3, "do"],
      ["rest", 3, "sleep"],
    ]);
    // Every `do` row is one a run wrote, with its idempotency key: none the engine would have to tell apart.
    await runInDurableObject(
      fixtureEnv.MCP_TASK_RUNNER.get(fixtureEnv.MCP_TASK_RUNNER.idFromName(task.id)),
      (_, state) => {
        const keyless = state.storage.sql.exec("SELECT name FROM steps WHERE kind = 'do' AND idempotency_key IS NULL");
        expect(keyless.toArray()).toEqual([]);
      },
    );
  });
});

describe("testTasks: start, read, wake, inject, evict", () => {
  it("wakes a retry back-off and a sleep, injects a result, and replays it after an eviction", async () => {
    const task = await kit.start("kit_report", { region: "emea" });
    expect(task.id).toMatch(/^[A-Za-z0-9_-]{32}$/);

    // The first attempt failed; its retry waits an hour. Made due now, the second attempt runs (and fails).
    await task.waitForStep("fetch", "waiting");
    expect(await task.wake()).toEqual(["fetch"]);
    const afterRetry = await task.waitFor("working");
    const fetch = (await task.steps()).find((step) => step.name === "fetch");
    expect(fetch).toMatchObject({ kind: "do", state: "waiting", attempts: 2 });
    expect(afterRetry.status).toBe("working");

    // Mocked while it waits for its last retry: the handler goes on with the injected value.
    await task.inject("fetch", { result: { revenue: 42 } });
    await task.waitForStep("rest", "waiting");
    expect(await task.steps()).toMatchObject([
      { name: "fetch", state: "done", attempts: 2 },
      { name: "rest", kind: "sleep", state: "waiting" },
    ]);

    // A fresh instance replays "fetch" from the journal (its body would throw), then the sleep is skipped.
    await task.evict();
    expect(await task.wake("rest")).toEqual(["rest"]);
    const done = await task.waitFor("completed");
    expect(textOf(done)).toBe('report for emea: {"revenue":42}');
    expect(done.statusMessage).toBe("fetched");
  });

  it("journals injected outcomes before the first run: a result, and a failure as a repairable error", async () => {
    const mocked = await kit.start("kit_report", { region: "apac" }, { inject: { fetch: { result: [1, 2] } } });
    await mocked.waitForStep("rest", "waiting");
    expect(await mocked.steps()).toMatchObject([{ name: "fetch", state: "done", attempts: 1 }, { name: "rest" }]);
    await mocked.wake();
    expect(textOf(await mocked.waitFor("completed"))).toBe("report for apac: [1,2]");

    const failing = await kit.start(
      "kit_report",
      { region: "apac" },
      { inject: { fetch: { error: { name: "UpstreamError", message: "quota exhausted" } } } },
    );
    const failed = await failing.waitFor("completed");
    expect(failed.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: { code: "step_failed", message: "quota exhausted", details: { step: "fetch", attempts: 1 } },
      },
    });
  });

  it("answers a question and cancels", async () => {
    const asking = await kit.start("confirm", {});
    await asking.waitFor("input_required");
    expect(Object.keys(await asking.questions())).toEqual(["ok"]);
    await asking.answer({ ok: { action: "accept", content: { ok: true } } });
    expect(textOf(await asking.waitFor("completed"))).toBe("accept");

    const cancelled = await kit.start("kit_report", { region: "x" });
    await cancelled.cancel();
    expect((await cancelled.waitFor("cancelled")).status).toBe("cancelled");
  });

  it("the raw client's getTask asks for the step timeline only when told to (steps)", async () => {
    const task = await kit.start("kit_report", { region: "apac" });
    await task.waitForStep("fetch", "waiting");
    const plain = await kit.client.getTask(task.id);
    expect(plain._meta?.[STEPS_META]).toBeUndefined();
    const detailed = await kit.client.getTask(task.id, { steps: true });
    const timeline = detailed._meta?.[STEPS_META] as unknown as { steps: StepTimelineEntry[] };
    expect(timeline.steps.find((step) => step.name === "fetch")).toMatchObject({
      kind: "do",
      attemptHistory: [{ n: 1, error: { name: expect.any(String) } }],
    });
  });

  it("logs every exchange through the hook and reaches a Worker without authenticate by default principal", async () => {
    const seen: Exchange[] = [];
    const open = testTasks({
      url: "http://localhost/open/mcp",
      binding: fixtureEnv.MCP_TASK_RUNNER,
      onExchange: (exchange) => seen.push(exchange),
    });
    const task = await open.start("kit_report", { region: "nordics" }, { inject: { fetch: { result: 7 } } });
    await task.waitForStep("rest", "waiting");
    expect(seen[0]).toMatchObject({ method: "tools/call", httpStatus: 200 });
    expect(seen.some((exchange) => exchange.method === "tasks/get")).toBe(true);
  });
});

describe("testTasks: every misuse is a clear error", () => {
  it("start: an unknown tool, a tool that is not a task, refused arguments", async () => {
    await expect(kit.start("no_such_tool", {})).rejects.toThrow(/tools\/call no_such_tool was refused: .*no_such_tool/);
    await expect(kit.start("echo", { text: "hi" })).rejects.toThrow(/echo is not a task tool/);
    const refused = await kit.start("kit_report", { region: 5 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TaskKitError);
    expect((refused as TaskKitError).message).toMatch(/kit_report refused the call/);
    expect((refused as TaskKitError).result).toMatchObject({ isError: true });
  });

  it("start with injections under the wrong principal", async () => {
    const wrong = testTasks({
      url: "http://fixture.test/mcp",
      binding: fixtureEnv.MCP_TASK_RUNNER,
      headers: { authorization: "Bearer bob" },
    });
    await expect(wrong.start("kit_report", { region: "x" }, { inject: { fetch: { result: 1 } } })).rejects.toThrow(
      /another principal than "anonymous"/,
    );
  });

  it("answer: a task that asks nothing, or a key it does not ask", async () => {
    const task = await kit.start("kit_report", { region: "x" });
    await expect(task.answer({ ok: { action: "accept" } })).rejects.toThrow(/asks nothing: it is working/);
    const asking = await kit.start("confirm", {});
    await asking.waitFor("input_required");
    await expect(asking.answer({ nope: { action: "accept" } })).rejects.toThrow(/does not ask nope; it asks ok/);
    await expect(asking.answer({ ok: { action: "maybe" } })).rejects.toThrow(/the answer was refused/);
  });

  it("wake: nothing waits on a clock, an unknown step, a finished task, an unknown task", async () => {
    const asking = await kit.start("confirm", {});
    await asking.waitFor("input_required");
    await expect(asking.wake()).rejects.toThrow(/waits on no sleep or retry back-off \(its steps: "ok"\)/);
    await expect(asking.wake("ok")).rejects.toThrow(/step "ok" is waiting without a timeout/);
    await expect(asking.wake("later")).rejects.toThrow(/has no step "later" yet/);
    await asking.answer({ ok: { action: "decline" } });
    await asking.waitFor("completed");
    await expect(asking.wake()).rejects.toThrow(/is completed: a finished task runs no more steps/);
    await expect(kit.task("A".repeat(32)).wake()).rejects.toThrow(/there is no task A{32}: start it first/);
  });

  it("inject: a finished step, a sleep, a result too large or not JSON, neither or both outcomes", async () => {
    const task = await kit.start("kit_report", { region: "x" }, { inject: { fetch: { result: 1 } } });
    await task.waitForStep("rest", "waiting");
    await expect(task.inject("fetch", { result: 2 })).rejects.toThrow(/step "fetch" already returned/);
    await expect(task.inject("rest", { result: 2 })).rejects.toThrow(/"rest" is a sleep step/);
    await expect(task.inject("render", { result: "x".repeat(1_048_577) })).rejects.toThrow(
      /a step result may be at most 1048576 bytes/,
    );
    await expect(task.inject("render", { result: 1n })).rejects.toThrow(/not JSON/);
    // What the types refuse is refused at run time too (a JavaScript test, say).
    // @ts-expect-error neither a result nor an error
    await expect(task.inject("render", {})).rejects.toThrow(/inject either \{ result \} or \{ error/);
    await expect(task.inject("render", { result: 1, error: { message: "x" } })).rejects.toThrow(/inject either/);
    // @ts-expect-error an error without its message
    await expect(task.inject("render", { error: {} })).rejects.toThrow(/needs a message/);
    // Nothing refused was journaled: "render" runs for real once the sleep is skipped.
    await task.wake();
    expect(textOf(await task.waitFor("completed"))).toBe("report for x: 1");
  });

  it("evict: a finished task; waitFor: a status the task cannot reach, or not in time", async () => {
    const task = await kit.start("kit_report", { region: "x" });
    await expect(task.waitFor("completed", { timeoutMs: 200 })).rejects.toThrow(
      /did not reach status completed \(not within 200 ms\): it is working/,
    );
    await task.cancel();
    await expect(task.waitFor("completed")).rejects.toThrow(/\(it ended first\): it is cancelled/);
    await expect(task.evict()).rejects.toThrow(/is cancelled: evicting a finished task replays nothing/);
  });

  it("the variable alone enables nothing: a runner without the seam has no seam method, and logs why", async () => {
    // ProductionRunner is a TaskRunner as deployed, whose env has DURABLE_MCP_TESTING set.
    const logged = vi.spyOn(console, "error");
    try {
      const stub = fixtureEnv.PRODUCTION_RUNNER.get(fixtureEnv.PRODUCTION_RUNNER.idFromName("t")) as unknown as Record<
        string,
        (op: unknown) => Promise<unknown>
      >;
      // Settled at once (an RPC promise left to `expect` is reported as unhandled).
      const refusal = await stub[TESTING_SEAM]!({ op: "inject", taskId: "t", step: "a", outcome: { result: 1 } }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(String(refusal)).toMatch(/does not implement "__durableMcpTestingSeam"/);
      expect(logged.mock.calls.map((call) => String(call[0]))).toContainEqual(
        expect.stringMatching(/DURABLE_MCP_TESTING is set, but it enables nothing/),
      );
      const production = testTasks({ binding: fixtureEnv.PRODUCTION_RUNNER });
      await expect(production.task("t").inject("a", { result: 1 })).rejects.toThrow(
        /this TaskRunner class has no testing seam: export withTestingSeam\(/,
      );
      await expect(production.task("t").wake()).rejects.toThrow(/has no testing seam/);
      // Nothing was written: the object is as untouched as an unknown id.
      expect(await stub["get"]!({ taskId: "t", principal: "anonymous" })).toBeNull();
    } finally {
      logged.mockRestore();
    }
  });

  it("withTestingSeam takes only a TaskRunner class", () => {
    expect(() => withTestingSeam(Map)).toThrow(/withTestingSeam takes a TaskRunner class/);
  });

  it("the test env has no TASK_RUNNER binding of that name", async () => {
    const kitWithoutBinding = testTasks({ binding: {} as DurableObjectNamespace });
    await expect(kitWithoutBinding.task("t").wake()).rejects.toThrow(/pass testTasks\(\{ binding/);
  });
});
