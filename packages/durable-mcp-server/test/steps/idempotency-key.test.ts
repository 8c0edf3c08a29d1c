import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { StepKeys } from "../../src/steps/step-keys.js";
import { isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";

/** base64url of an HMAC-SHA256: 32 bytes, 43 characters. */
const KEY_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The key a task's `do` step is given: HMAC(the task's salt, `${occurrence}:${name}`), derived when read. */
const derivedKey = (started: StartedTask, name: string, occurrence = 1) =>
  runInDurableObject(started.stub, (_, state) =>
    new StepKeys(state.storage.sql.exec<{ s: string }>("SELECT step_key_salt AS s FROM task").one().s).derive(
      name,
      occurrence,
    ),
  );

/** The step's journal row (attempts started so far), once it is written. */
const chargeAttempts = (started: StartedTask) =>
  runInDurableObject(
    started.stub,
    (_, state) =>
      state.storage.sql.exec<{ attempts: number }>("SELECT attempts FROM steps WHERE name = 'charge'").toArray()[0]
        ?.attempts ?? 0,
  );

async function resultOf(started: StartedTask): Promise<{ charge: string; notify: string }> {
  const task = await waitForTask(started, isFinal);
  expect(task.status).toBe("completed");
  return JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text);
}

describe("step idempotency keys", () => {
  it("are derived from the task's salt and stay the same across retries and an eviction", async () => {
    const started = await startTask("keyed", { failures: 2, delayMs: 300 });
    await waitForTask(started, async () => (await started.probe.value("charge-key-1")) !== undefined);
    const first = (await started.probe.value("charge-key-1")) as string;
    expect(first).toMatch(KEY_SHAPE);
    expect(first).toBe(await derivedKey(started, "charge"));
    // Evicted once the first attempt is journaled: the next attempts run in a fresh instance.
    await waitForTask(started, async () => (await chargeAttempts(started)) >= 1);
    await evictDurableObject(started.stub);

    const { charge, notify } = await resultOf(started);
    expect(await started.probe.value("charge-key-2")).toBe(first);
    expect(await started.probe.value("charge-key-3")).toBe(first);
    // The replays after the sleep read the journaled result; the key is the same one.
    expect(charge).toBe(first);
    expect(notify).toBe(await derivedKey(started, "notify"));
    expect(notify).toMatch(KEY_SHAPE);
    expect(notify).not.toBe(charge);
  });

  it("differ between tasks and never contain the task id", async () => {
    const [a, b] = await Promise.all([startTask("keyed"), startTask("keyed")]);
    const [keysA, keysB] = await Promise.all([resultOf(a!), resultOf(b!)]);
    const all = [keysA.charge, keysA.notify, keysB.charge, keysB.notify];
    expect(new Set(all).size).toBe(4);
    for (const key of all) {
      expect(key).toMatch(KEY_SHAPE);
      expect(key).not.toContain(a!.taskId);
      expect(key).not.toContain(b!.taskId);
    }
    // The salt the keys come from stays inside the object: 256 bits, base64url.
    const salt = await runInDurableObject(
      a!.stub,
      (_, state) => state.storage.sql.exec<{ s: string }>("SELECT step_key_salt AS s FROM task").one().s,
    );
    expect(salt).toMatch(KEY_SHAPE);
    expect(JSON.stringify(await a!.stub.get(a!.access, { steps: true }))).not.toContain(salt);
  });
});
