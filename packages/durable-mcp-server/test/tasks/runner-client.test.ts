import { describe, expect, it } from "vitest";
import { isTransient, RunnerClient } from "../../src/tasks/runner-client.js";
import { fixtureEnv } from "../helpers.js";

const env = fixtureEnv as typeof fixtureEnv & { RESETTING_RUNNER: DurableObjectNamespace };

describe("RunnerClient", () => {
  it("retries a call whose Durable Object was reset, on a fresh stub", async () => {
    const client = new RunnerClient(env.RESETTING_RUNNER, { attempts: 3, baseDelayMs: 5 });
    const task = { taskId: "reset-test", principal: "p", tool: "t", input: "{}", ttlMs: null, pollIntervalMs: null };
    const created = (await client.create(task)) as unknown as { calls: number };
    expect(created.calls).toBe(2);
  });

  it("does not retry an application error", async () => {
    const client = new RunnerClient(env.RESETTING_RUNNER, { attempts: 3, baseDelayMs: 5 });
    const error = await client.get({ taskId: "app-error", principal: "p" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/a plain application error/);
    expect(isTransient(error)).toBe(false);
  });
});
