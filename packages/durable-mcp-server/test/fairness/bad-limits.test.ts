import { describe, expect, it } from "vitest";
import * as z from "zod";
import { durableMcp, McpServer } from "../../src/index.js";
import { fixtureEnv, isFinal, waitForTask } from "../helpers.js";
import { rpc } from "../jsonrpc.js";
import { limiterStatus, startLimited, unique } from "./helpers.js";

// The bad input, each case where it can be known: a TypeError at registration (or, for a named limit, where
// the server meets the deployment's limits), else a clear code on the create or on the task; and no queue sticks.

const server = (concurrency: unknown) => () => {
  const built = new McpServer({ name: "x", version: "1" });
  built.registerTask("crawl", { inputSchema: z.object({}), concurrency: concurrency as never }, async () => "ok");
  return built;
};

const listTools = (mcp: ReturnType<typeof durableMcp>) =>
  mcp.fetch(
    new Request("http://localhost/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    }),
    fixtureEnv,
  );

/** Builds the server for one request of `mcp`: the errors its handler reports, and the answer. */
async function firstBuild(
  concurrency: unknown,
  named?: Record<string, { concurrent: number }>,
): Promise<{ status: number; errors: Error[] }> {
  const errors: Error[] = [];
  const mcp = durableMcp(server(concurrency), {
    binding: "LIMITS_APP_RUNNER",
    limits: named ? { named } : undefined,
    handler: { onerror: (error) => errors.push(error) },
  });
  const response = await listTools(mcp);
  await response.body?.cancel();
  return { status: response.status, errors };
}

describe("a named limit the deployment does not declare", () => {
  it("is a TypeError when the server is first built, naming the task, the limit and what is declared", async () => {
    const { status, errors } = await firstBuild({ limit: "nowhere" }, { "crawl-api": { concurrent: 2 } });
    expect(status).toBe(500);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect(errors[0]!.message).toBe(
      'task "crawl": concurrency names limit "nowhere", which durableMcp\'s limits.named does not declare (declared: "crawl-api")',
    );
  });

  it("inside a list of limits too, and with none declared", async () => {
    const { errors } = await firstBuild([{ limit: 2 }, { limit: "api" }]);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect(errors[0]!.message).toMatch(/names limit "api", which .* does not declare \(it declares none\)/);
  });

  it("a declared one builds and serves", async () => {
    expect(await firstBuild([{ limit: "crawl-api" }], { "crawl-api": { concurrent: 2 } })).toEqual({
      status: 200,
      errors: [],
    });
  });
});

const register = (config: Record<string, unknown>) => () =>
  new McpServer({ name: "x", version: "1" }).registerTask("t", { inputSchema: z.object({}), ...config }, async () => 1);

describe("bad declarations at registration", () => {
  it.each([
    [{ rateLimit: { limit: 2, period: "1 minute", queue: "yes" } }, /rateLimit.queue must be true or false/],
    [{ rateLimit: { limit: 2.5, period: "1 minute", queue: true } }, /rateLimit.limit must be a positive integer/],
    [{ rateLimit: { limit: 2, period: "every now and then", queue: true } }, /rateLimit.period: /],
    [{ rateLimit: { limit: 2, period: "1 minute", key: 7 } }, /rateLimit.key must be a function/],
    [{ concurrency: { limit: "" } }, /concurrency.limit must be a positive integer/],
    [{ concurrency: { limit: Number.NaN } }, /concurrency.limit must be a positive integer/],
  ])("%j", (config, message) => {
    expect(register(config)).toThrow(TypeError);
    expect(register(config)).toThrow(message);
  });
});

const call = (tenant: string, principal: string) =>
  rpc("tools/call", { name: "keyed_rate", arguments: { tenant } }, { path: "/limits/mcp", principal, declare: true });

describe("a rate limit's key function on the create", () => {
  it.each([
    ["throw", "limit_key_failed"],
    ["number", "limit_key_invalid"],
    ["long", "limit_key_invalid"],
  ])("%s: the create is refused with %s, and no task is made", async (tenant, reason) => {
    const refused = await call(tenant, unique("kay"));
    expect(refused.body.result).toBeUndefined();
    expect(refused.body.error?.data).toMatchObject({ reason });
  });

  it("a good key is counted under its own value", async () => {
    const tenant = unique("acme");
    expect((await call(tenant, unique("kay"))).body.result?.resultType).toBe("task");
    expect(await limiterStatus(`rate:task:keyed_rate:${tenant}`)).toMatchObject({ windowCount: 1 });
  });
});

describe("bad answers on the runner fail the task with a clear code, holding nothing", () => {
  it.each([
    ["rated_bad_key", {}, "limit_key_invalid", "rate:task:rated_bad_key"],
    ["rated_bad_key", { group: "y".repeat(257) }, "limit_key_invalid", "rate:task:rated_bad_key"],
    ["throwing_priority", {}, "priority_failed", "task:throwing_priority"],
    ["word_priority", {}, "priority_invalid", "task:word_priority"],
  ])("%s %j: %s", async (tool, input, reason, key) => {
    const task = await startLimited(tool, input, unique("fay"));
    const done = await waitForTask(task, isFinal, 10_000);
    expect(done.status).toBe("failed");
    expect(done.error?.data).toMatchObject({ reason });
    expect(await limiterStatus(key)).toMatchObject({ inUse: 0, queued: 0, rateWaiting: 0 });
  });
});
