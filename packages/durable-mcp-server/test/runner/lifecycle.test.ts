import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fixtureEnv, isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";

const stepState = (started: StartedTask, name: string) =>
  runInDurableObject(started.stub, (_, state) =>
    state.storage.sql
      .exec<{ state: string }>("SELECT state FROM steps WHERE name = ?", name)
      .toArray()
      .map((row) => row.state)
      .at(0),
  );
const userTables = (started: StartedTask) =>
  runInDurableObject(started.stub, (_, state) =>
    state.storage.sql
      .exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'")
      .toArray(),
  );

describe("cancel", () => {
  it("cancels a running step: its signal aborts and the task ends cancelled", async () => {
    const started = await startTask("hang");
    await waitForTask(started, async () => (await started.probe.count("started")) === 1);
    expect(await started.stub.cancel(started.access)).toBe(true);
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("cancelled");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await started.probe.count("finished")).toBe(0);
    // Idempotent on a final task.
    expect(await started.stub.cancel(started.access)).toBe(true);
    expect((await started.stub.get(started.access))?.status).toBe("cancelled");
  });

  for (const ignoreAbort of [false, true]) {
    it(`ends the run at a cancel during a step whose body ${ignoreAbort ? "ignores" : "honours"} its signal, then purges it`, async () => {
      // On the files-enabled runner: "big" spills its result to R2 before "hang" starts. TTL 3 s, purge grace 0.2 s.
      const lateMs = ignoreAbort ? 400 : 60_000;
      const started = await startTask(
        "spill_then_hang",
        { ignoreAbort, lateMs },
        { namespace: fixtureEnv.MCP_TASK_RUNNER, ttlMs: 3_000 },
      );
      await waitForTask(started, async () => (await stepState(started, "hang")) === "running");
      const spilled = await fixtureEnv.FILES.list({ prefix: `results/${started.taskId}/` });
      expect(spilled.objects).toHaveLength(1);

      expect(await started.stub.cancel(started.access)).toBe(true);
      expect((await started.stub.get(started.access))?.status).toBe("cancelled");
      // The run ended: the instance is no longer busy, so an alarm delivered now is served, not deferred.
      const busy = () =>
        runInDurableObject(started.stub, (instance) => {
          const { running } = (instance as unknown as { run: { running: boolean } }).run;
          // A renamed field would read as "not busy" and pass this wait vacuously.
          expect(typeof running).toBe("boolean");
          return running;
        });
      await waitForTask(started, async () => !(await busy()), 2_000);
      // A body that ignored its signal finishes later; its result is never journaled after the cancel.
      await new Promise((resolve) => setTimeout(resolve, ignoreAbort ? lateMs + 200 : 50));
      expect(await stepState(started, "hang")).toBe("running");
      expect((await started.stub.get(started.access))?.status).toBe("cancelled");

      // Past TTL + grace, the purge alarm (on its own, or driven here) deletes the rows and the spilled result.
      const deadline = Date.now() + 10_000;
      while ((await userTables(started)).length > 0 && Date.now() < deadline) {
        await runDurableObjectAlarm(started.stub);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await userTables(started)).toEqual([]);
      expect(await started.stub.get(started.access)).toBeNull();
      expect((await fixtureEnv.FILES.list({ prefix: `results/${started.taskId}/` })).objects).toEqual([]);
    });
  }

  it("lets the first ending win when cancel races completion", async () => {
    for (const delay of [0, 5, 10, 20]) {
      const started = await startTask("hang", { ms: 10 });
      await waitForTask(started, async () => (await started.probe.count("started")) === 1);
      await new Promise((resolve) => setTimeout(resolve, delay));
      await started.stub.cancel(started.access);
      const first = await waitForTask(started, isFinal);
      await new Promise((resolve) => setTimeout(resolve, 30));
      const later = await started.stub.get(started.access);
      expect(["completed", "cancelled"]).toContain(first.status);
      expect(later).toEqual(first);
    }
  });

  it("leaves no alarm behind when a task without a TTL is cancelled while it sleeps", async () => {
    const started = await startTask("sleeper", { ms: 60_000 }, { ttlMs: null });
    await waitForTask(started, async () => {
      const alarm = await runInDurableObject(started.stub, (_, state) => state.storage.getAlarm());
      return alarm !== null && alarm > Date.now() + 30_000;
    });
    await started.stub.cancel(started.access);
    expect(await runInDurableObject(started.stub, (_, state) => state.storage.getAlarm())).toBeNull();
    expect((await started.stub.get(started.access))?.status).toBe("cancelled");
  });

  it("does not cancel a task that already completed", async () => {
    const started = await startTask("three_steps");
    const done = await waitForTask(started, isFinal);
    await started.stub.cancel(started.access);
    expect(await started.stub.get(started.access)).toEqual(done);
  });
});

describe("task record", () => {
  it("answers a foreign principal exactly like an unknown task", async () => {
    const started = await startTask("asks");
    await waitForTask(started, (task) => task.status === "input_required");
    const foreign = { taskId: started.taskId, principal: "mallory" };
    expect(await started.stub.get(foreign)).toBeNull();
    expect(await started.stub.update(foreign, { name: { action: "accept", content: {} } })).toBeNull();
    expect(await started.stub.cancel(foreign)).toBe(false);
    const task = await started.stub.get(started.access);
    expect(task?.status).toBe("input_required");
    expect(Object.keys(task?.inputRequests ?? {})).toEqual(["name", "color"]);
  });

  it("fails a task still running at its TTL, then purges it", async () => {
    const started = await startTask("sleeper", { ms: 60_000 }, { ttlMs: 150 });
    const failed = await waitForTask(started, isFinal);
    expect(failed.status).toBe("failed");
    expect(failed.error).toMatchObject({ code: -32603, data: { reason: "expired" } });
    // The fixture runner purges 200 ms after expiry.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await runDurableObjectAlarm(started.stub);
    expect(await started.stub.get(started.access)).toBeNull();
    expect(await userTables(started)).toEqual([]);
  });

  it("keeps a finished task without a TTL, with no alarm left armed", async () => {
    const started = await startTask("three_steps", {}, { ttlMs: null });
    const done = await waitForTask(started, isFinal);
    expect(done.ttlMs).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await runDurableObjectAlarm(started.stub)).toBe(false);
    expect(await started.stub.get(started.access)).toEqual(done);
  });

  it("reports a failed step with what already succeeded", async () => {
    const started = await startTask("fails_late");
    const task = await waitForTask(started, isFinal);
    expect(task.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: {
          code: "step_failed",
          retryable: false,
          partial: { completedSteps: ["fetch", "parse"] },
          details: { step: "upload" },
        },
      },
    });
  });

  it("passes a handler's RepairableError through intact", async () => {
    const started = await startTask("repairable");
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    expect(task.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: {
          code: "quota_exceeded",
          message: "the report quota is used up",
          retryable: true,
          recoveryHint: "try again after midnight UTC",
          param: "pages",
        },
      },
    });
  });

  it("ends failed with the JSON-RPC error a handler raises as a protocol error", async () => {
    const started = await startTask("protocol_failure");
    const task = await waitForTask(started, isFinal);
    expect(task).toMatchObject({
      status: "failed",
      error: { code: -32603, message: "the backend refused the job", data: { reason: "backend" } },
    });
  });
});

describe("runtime failures", () => {
  it("lets the platform retry a run that failed outside the handler, then fails the task visibly", async () => {
    const started = await startTask("unbuildable", {}, { ttlMs: null });
    const runAlarm = () =>
      runInDurableObject(started.stub, (instance) => (instance as unknown as { alarm(): Promise<void> }).alarm()).then(
        () => "ok",
        (error: unknown) => String(error),
      );
    // The first delivery may already have happened on its own; keep delivering until the task gives up.
    const outcomes: string[] = [];
    for (let i = 0; i < 3 && (await started.stub.get(started.access))?.status === "working"; i++)
      outcomes.push(await runAlarm());
    expect(outcomes.some((outcome) => outcome.includes("createServer exploded"))).toBe(true);
    const task = await waitForTask(started, isFinal);
    expect(task).toMatchObject({
      status: "failed",
      error: { code: -32603, message: "task runtime error: createServer exploded", data: { reason: "runtime_error" } },
    });
  });
});

describe("replay safety", () => {
  it("fails the task when the code now asks for another kind of step under a journaled name", async () => {
    const started = await startTask("drifting");
    await waitForTask(started, async () => {
      const journal = await runInDurableObject(started.stub, (_, state) =>
        state.storage.sql.exec("SELECT name FROM steps").toArray(),
      );
      return journal.length === 2;
    });
    await started.probe.set("version", "kind-changed");
    await evictDurableObject(started.stub);
    await runDurableObjectAlarm(started.stub);
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({ code: -32603, data: { reason: "replay_divergence", step: "first" } });
    expect(task.error?.message).toMatch(/journal holds a "do" step where the code now asks for "sleep"/);
  });

  it("runs a name used again as its own step (occurrence 2), as Cloudflare Workflows does", async () => {
    const started = await startTask("drifting");
    await started.probe.set("version", "name-reused");
    await waitForTask(started, async () => {
      const journal = await runInDurableObject(started.stub, (_, state) =>
        state.storage.sql.exec("SELECT name FROM steps").toArray(),
      );
      return journal.length === 2;
    });
    await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec("UPDATE steps SET wake_at = 0 WHERE name = 'wait'"),
    );
    await runDurableObjectAlarm(started.stub);
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    const rows = await runInDurableObject(started.stub, (_, state) =>
      state.storage.sql.exec("SELECT name, occurrence, result FROM steps WHERE kind = 'do' ORDER BY seq").toArray(),
    );
    expect(rows).toEqual([
      { name: "first", occurrence: 1, result: "1" },
      { name: "first", occurrence: 2, result: "2" },
    ]);
  });
});
