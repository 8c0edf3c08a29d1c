import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { isFinal, startTask, waitForTask, type StartedTask } from "../helpers.js";

/** base64url of an HMAC-SHA256: 32 bytes, 43 characters. */
const KEY_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const journaledKeys = (started: StartedTask) =>
  runInDurableObject(started.stub, (_, state) =>
    Object.fromEntries(
      state.storage.sql
        .exec<{ name: string; key: string | null }>("SELECT name, idempotency_key AS key FROM steps ORDER BY seq")
        .toArray()
        .map((row) => [row.name, row.key]),
    ),
  );

async function resultOf(started: StartedTask): Promise<{ charge: string; notify: string }> {
  const task = await waitForTask(started, isFinal);
  expect(task.status).toBe("completed");
  return JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text);
}

describe("step idempotency keys", () => {
  it("are journaled at the first attempt and stay the same across retries and an eviction", async () => {
    const started = await startTask("keyed", { failures: 2, delayMs: 300 });
    await waitForTask(started, async () => (await started.probe.value("charge-key-1")) !== undefined);
    const first = (await started.probe.value("charge-key-1")) as string;
    expect(first).toMatch(KEY_SHAPE);
    // Journaled with the first attempt.
    await waitForTask(started, async () => (await journaledKeys(started)).charge === first);
    await evictDurableObject(started.stub);

    const { charge, notify } = await resultOf(started);
    expect(await started.probe.value("charge-key-2")).toBe(first);
    expect(await started.probe.value("charge-key-3")).toBe(first);
    // The replays after the sleep read the journaled result; the key is the same one.
    expect(charge).toBe(first);
    expect(await journaledKeys(started)).toEqual({ charge: first, pause: null, notify });
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
