import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { StepKeys } from "../../src/steps/step-keys.js";
import { isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";
import { journalRows } from "./journal-rows.js";

type Row = { name: string; occurrence: number; kind: string; state: string; key: string | null };

function journal(started: StartedTask): Promise<Row[]> {
  return runInDurableObject(started.stub, (_, object) =>
    journalRows(object.storage.sql).map(({ name, occurrence, kind, state, key }): Row => ({
      name,
      occurrence,
      kind,
      state,
      key,
    })),
  );
}

/** Waits until the task sleeps in its `n`th sleep, then evicts the object and makes the sleep due. */
async function wakeFromSleep(started: StartedTask, n: number): Promise<void> {
  await waitForTask(started, async () =>
    (await journal(started)).some((row) => row.kind === "sleep" && row.occurrence === n && row.state === "waiting"),
  );
  await evictDurableObject(started.stub);
  await runInDurableObject(started.stub, (_, state) =>
    state.storage.sql.exec("UPDATE steps SET wake_at = 0 WHERE state = 'waiting'"),
  );
  await runDurableObjectAlarm(started.stub);
}

const text = (task: { result?: unknown }) => (task.result as { content: Array<{ text: string }> }).content[0]!.text;

describe("repeated step names (Workflows semantics)", () => {
  it("runs step.do with one name five times across sleeps: five results, each body run once", async () => {
    const started = await startTask("repeated", { pauseMs: 60_000 });
    await wakeFromSleep(started, 1);
    await wakeFromSleep(started, 2);
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("completed");
    expect(JSON.parse(text(task))).toEqual([1, 2, 3, 4, 5].map((n) => `use ${n}, run ${n}`));
    expect(await started.probe.count("same name")).toBe(5);
    const rows = await journal(started);
    expect(rows.map((row) => [row.name, row.occurrence, row.kind, row.state])).toEqual([
      ["same name", 1, "do", "done"],
      ["same name", 2, "do", "done"],
      ["pause", 1, "sleep", "done"],
      ["same name", 3, "do", "done"],
      ["same name", 4, "do", "done"],
      ["pause", 2, "sleep", "done"],
      ["same name", 5, "do", "done"],
    ]);
    // Every use has its own idempotency key, handed to its body: use n's key is HMAC(salt, `${n}:${name}`), so
    // the occurrence is real, not a constant.
    const salt = await runInDurableObject(
      started.stub,
      (_, state) => state.storage.sql.exec<{ s: string }>("SELECT step_key_salt AS s FROM task").one().s,
    );
    const derived = new StepKeys(salt);
    const keys = [1, 2, 3, 4, 5].map((n) => derived.derive("same name", n));
    expect(new Set(keys).size).toBe(5);
    for (let i = 0; i < 5; i++) expect(await started.probe.value(`key-${i}`)).toBe(keys[i]);
  });

  it("numbers parallel uses of one name in call order, the same on every replay", async () => {
    const started = await startTask("repeated_parallel", { pauseMs: 60_000 });
    await wakeFromSleep(started, 1);
    const task = await waitForTask(started, isFinal);
    expect(JSON.parse(text(task))).toEqual([10, 20, 30, 40, 50]);
    for (let page = 1; page <= 5; page++) expect(await started.probe.count(`page-${page}`)).toBe(1);
    expect((await journal(started)).filter((row) => row.kind === "do").map((row) => row.occurrence)).toEqual([
      1, 2, 3, 4, 5,
    ]);
  });

  it("fails with replay_divergence where the kind at a given occurrence changed", async () => {
    const started = await startTask("kind_at_occurrence");
    await waitForTask(started, async () => (await journal(started)).length === 3);
    await started.probe.set("version", "kind-changed");
    await wakeFromSleep(started, 1);
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({ code: -32603, data: { reason: "replay_divergence", step: "x#2" } });
    expect(task.error?.message).toMatch(/journal holds a "do" step where the code now asks for "sleep"/);
  });
  it("fails a kind change in warn mode too: the key holds the other kind's row, so nothing could go on from it", async () => {
    const started = await startTask("kind_at_occurrence_warn");
    await waitForTask(started, async () => (await journal(started)).length === 3);
    await started.probe.set("version", "kind-changed");
    await wakeFromSleep(started, 1);
    const task = await waitForTask(started, isFinal);
    expect(task.status).toBe("failed");
    expect(task.error).toMatchObject({ code: -32603, data: { reason: "replay_divergence", step: "x#2" } });
  });
});

describe("input requests under a repeated name", () => {
  it("keys them confirm, then confirm#2, and refuses an input step name that would collide", async () => {
    const started = await startTask("confirm_twice");
    const first = await waitForTask(started, (task) => task.status === "input_required");
    expect(Object.keys(first.inputRequests ?? {})).toEqual(["confirm"]);
    // An answer under the second key before it is asked is not outstanding, so it is ignored.
    expect(
      await started.stub.update(started.access, { "confirm#2": { action: "accept", content: { ok: false } } }),
    ).toEqual({ accepted: [] });
    expect(await started.stub.update(started.access, { confirm: { action: "accept", content: { ok: true } } })).toEqual(
      { accepted: ["confirm"] },
    );
    const second = await waitForTask(
      started,
      (task) => task.status === "input_required" && task.inputRequests?.["confirm#2"] !== undefined,
    );
    expect(Object.keys(second.inputRequests ?? {})).toEqual(["confirm#2"]);
    expect(second.inputRequests?.["confirm#2"]).toMatchObject({ params: { message: "Second?" } });
    // The first key is answered already: a repeat changes nothing.
    expect(
      await started.stub.update(started.access, { confirm: { action: "accept", content: { ok: false } } }),
    ).toEqual({ accepted: [] });
    expect(
      await started.stub.update(started.access, { "confirm#2": { action: "accept", content: { ok: false } } }),
    ).toEqual({ accepted: ["confirm#2"] });
    const task = await waitForTask(started, isFinal);
    expect(JSON.parse(text(task))).toEqual([
      true,
      false,
      `TypeError: step "confirm#3": an input step's name may not end in "#" and a number`,
    ]);
    expect((await journal(started)).map((row) => [row.name, row.occurrence, row.state])).toEqual([
      ["confirm", 1, "done"],
      ["confirm", 2, "done"],
    ]);
  });
});
