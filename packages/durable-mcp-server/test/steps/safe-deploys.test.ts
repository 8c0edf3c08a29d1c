import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";

type Row = { name: string; occurrence: number; kind: string; state: string };

function journal(started: StartedTask): Promise<Row[]> {
  return runInDurableObject(started.stub, (_, state) =>
    state.storage.sql.exec<Row>("SELECT name, occurrence, kind, state FROM steps ORDER BY seq").toArray(),
  );
}

/** Waits until the task sleeps in `sleep`, then "deploys" `version`: evicts the object and makes the sleep due. */
async function deployDuringSleep(started: StartedTask, sleep: string, version: string | number | null) {
  await waitForTask(started, async () =>
    (await journal(started)).some((row) => row.name === sleep && row.state === "waiting"),
  );
  if (version !== null) await started.probe.set("version", version);
  await evictDurableObject(started.stub);
  await runInDurableObject(started.stub, (_, state) =>
    state.storage.sql.exec("UPDATE steps SET wake_at = 0 WHERE state = 'waiting'"),
  );
  await runDurableObjectAlarm(started.stub);
  return waitForTask(started, isFinal);
}

const text = (task: { result?: unknown }) => (task.result as { content: Array<{ text: string }> }).content[0]!.text;

describe("replay rule: (name, occurrence), quiescence, and the handler's return", () => {
  it("fails a task whose finished step was renamed when the handler returns, after the renamed step ran", async () => {
    const started = await startTask("renamable");
    const task = await deployDuringSleep(started, "pause", "renamed");
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({
      code: -32603,
      data: { reason: "replay_divergence", step: "a renamed", journaled: "a" },
    });
    expect(task.error?.message).toMatch(
      /handler returned while the journal's "do" step "a" \(done\) was never reached/,
    );
    // What the default can no longer prevent: the renamed step's body ran (once), and so did the steps after it.
    expect(await started.probe.count("a")).toBe(1);
    expect(await started.probe.count("a renamed")).toBe(1);
    expect(await started.probe.count("c")).toBe(1);
  });

  it("in strict mode fails a renamed step at quiescence, before its body runs", async () => {
    const started = await startTask("renamable_strict");
    const task = await deployDuringSleep(started, "pause", "renamed");
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({
      code: -32603,
      data: { reason: "replay_divergence", step: "a renamed", journaled: "a" },
    });
    expect(task.error?.message).toMatch(/step "a renamed".*"do" step "a" \(done\) was never reached/);
    expect(await started.probe.count("a")).toBe(1);
    expect(await started.probe.count("a renamed")).toBe(0);
    expect(await started.probe.count("c")).toBe(0);
    expect((await journal(started)).map((row) => row.name)).toEqual(["a", "pause"]);
  });

  it("in warn mode completes a task whose finished step was renamed, with what the handler returned", async () => {
    const started = await startTask("renamable_warn");
    const task = await deployDuringSleep(started, "pause", "renamed");
    expect(task.status).toBe("completed");
    expect(text(task)).toBe("done");
    expect(await started.probe.count("a renamed")).toBe(1);
    // The unclaimed row stays in the journal as it was.
    expect((await journal(started)).map((row) => row.name)).toEqual(["a", "pause", "a renamed", "c"]);
  });

  it("lets a parallel branch reach a new step while another branch still replays its journaled steps", async () => {
    const started = await startTask("branches", { count: 20, pauseMs: 60_000 });
    const task = await deployDuringSleep(started, "right nap", null);
    expect(task.status).toBe("completed");
    expect(JSON.parse(text(task))).toEqual({ l: 190, r: 1 });
    for (let i = 0; i < 20; i++) expect(await started.probe.count(`left ${i}`)).toBe(1);
    expect(await started.probe.count("right 0")).toBe(1);
    expect(await started.probe.count("right 1")).toBe(1);
  });

  it("fails a parallel branch whose journaled step was renamed, naming both steps", async () => {
    const started = await startTask("branches", { count: 20, pauseMs: 60_000 });
    const task = await deployDuringSleep(started, "right nap", "renamed");
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({
      data: { reason: "replay_divergence", step: "right renamed", journaled: "right 0" },
    });
    for (let i = 0; i < 20; i++) expect(await started.probe.count(`left ${i}`)).toBe(1);
  });

  it("in strict mode fails a parallel branch whose journaled step was renamed before the new body runs", async () => {
    const started = await startTask("branches_strict", { count: 20, pauseMs: 60_000 });
    const task = await deployDuringSleep(started, "right nap", "renamed");
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({
      data: { reason: "replay_divergence", step: "right renamed", journaled: "right 0" },
    });
    expect(await started.probe.count("right renamed")).toBe(0);
    expect(await started.probe.count("right 1")).toBe(0);
    for (let i = 0; i < 20; i++) expect(await started.probe.count(`left ${i}`)).toBe(1);
  });
});

describe("step.patched", () => {
  it("keeps a task that ran past the patch on the old code on the old path (false), on every replay", async () => {
    const started = await startTask("patchable");
    // Started under v1 (a, b), sleeping; v2 adds the patch.
    const task = await deployDuringSleep(started, "nap", 2);
    expect(task.status).toBe("completed");
    expect(text(task)).toBe("a,b,c,true");
    expect(await started.probe.count("b")).toBe(1);
    expect(await started.probe.count("b2")).toBe(0);
    // The answer is journaled (false), so every later replay answers the same whatever the timing.
    expect((await journal(started)).map((row) => [row.name, row.kind])).toContainEqual(["use b2", "patch"]);
  });

  it("gives a task that reaches the patch fresh the new path (true), journals the marker and replays it", async () => {
    const started = await startTask("patchable", { version: 2 });
    // Replayed after an eviction (still v2): the journaled marker answers true again.
    const task = await deployDuringSleep(started, "nap", null);
    expect(task.status).toBe("completed");
    expect(text(task)).toBe("a,b2,c,true");
    expect(await started.probe.count("b")).toBe(0);
    expect(await started.probe.count("b2")).toBe(1);
    expect((await journal(started)).map((row) => [row.name, row.occurrence, row.kind])).toEqual([
      ["a", 1, "do"],
      ["use b2", 0, "patch"],
      ["b2", 1, "do"],
      ["nap", 1, "sleep"],
      ["c", 1, "do"],
    ]);
  });

  it("lets the patch be deprecated: a task with the marker journaled replays code that no longer asks", async () => {
    const started = await startTask("patchable", { version: 2 });
    // v3 drops the step.patched call and keeps only the new path; the journaled marker is not a step to reach.
    const task = await deployDuringSleep(started, "nap", 3);
    expect(task.status).toBe("completed");
    expect(text(task)).toBe("a,b2,c");
    expect(await started.probe.count("b2")).toBe(1);
    expect(await started.probe.count("c")).toBe(1);
  });

  it("fails, as any divergence, a task on the old path once the patch is deprecated", async () => {
    const started = await startTask("patchable", { version: 1 });
    // Deprecating too early: a task that took the old path ("b") is still in flight when v3 removes it.
    const task = await deployDuringSleep(started, "nap", 3);
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({ data: { reason: "replay_divergence", step: "b2", journaled: "b" } });
  });
});
