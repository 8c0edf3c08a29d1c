import { describe, expect, it } from "vitest";
import * as z from "zod";
import { durableMcp, McpServer } from "../../src/index.js";
import { SELF } from "cloudflare:test";
import { rpc } from "../jsonrpc.js";
import { unique } from "./helpers.js";

const PATH = "/limits/mcp";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const call = (name: string, args: Record<string, unknown>, principal: string, declare = true) =>
  rpc("tools/call", { name, arguments: args }, { path: PATH, principal, declare });

describe("rate limits on creates", () => {
  it("allows exactly `limit` creates in any period and says how long to wait (JSON-RPC error data)", async () => {
    const principal = unique("rita");
    // `ping` allows 3 per 2 s; the principal's 4 per minute is not reached by these.
    const started = Date.now();
    expect((await call("ping", {}, principal)).body.result?.resultType).toBe("task");
    const firstDone = Date.now();
    for (let i = 0; i < 2; i++) expect((await call("ping", {}, principal)).body.result?.resultType).toBe("task");
    const fourthSent = Date.now();
    const refused = await call("ping", {}, principal);
    const fourthDone = Date.now();
    expect(refused.body.error?.data).toMatchObject({ reason: "rate_limited", limit: "rate:task:ping" });
    const { retryAfter, retryAfterMs } = refused.body.error!.data as { retryAfter: number; retryAfterMs: number };
    // The wait is until the first create leaves the 2 s window: its count happened within [started, firstDone], the
    // refusal within [fourthSent, fourthDone].
    expect(retryAfterMs).toBeGreaterThanOrEqual(started + 2_000 - fourthDone);
    expect(retryAfterMs).toBeLessThanOrEqual(firstDone + 2_000 - fourthSent);
    expect(retryAfter).toBe(Math.ceil(retryAfterMs / 1000));
    // Still refused just before the oldest leaves the window, taken once it has.
    if (retryAfterMs > 300) {
      await sleep(retryAfterMs - 250);
      expect((await call("ping", {}, principal)).body.error?.data?.reason).toBe("rate_limited");
      await sleep(300);
    } else {
      await sleep(retryAfterMs + 50);
    }
    expect((await call("ping", {}, principal)).body.result?.resultType).toBe("task");
  });

  it("refuses a fallback client with the repairable envelope", async () => {
    const principal = unique("sam");
    for (let i = 0; i < 3; i++) await call("ping", {}, principal, false);
    const refused = await call("ping", {}, principal, false);
    expect(refused.body.result?.isError).toBe(true);
    expect(refused.body.result?.structuredContent?.error).toMatchObject({
      code: "rate_limited",
      retryable: true,
      details: { reason: "rate_limited" },
    });
  });

  it("counts every task tool against the per-principal creates per minute", async () => {
    const principal = unique("tess");
    for (let i = 0; i < 4; i++) expect((await call("any", {}, principal)).body.result?.resultType).toBe("task");
    const refused = await call("any", {}, principal);
    expect(refused.body.error?.data).toMatchObject({ reason: "rate_limited", limit: `rate:principal:${principal}` });
    // Another principal is not affected.
    expect((await call("any", {}, unique("uma"))).body.result?.resultType).toBe("task");
  });

  it("runs a task under a shared named limit declared on the server", async () => {
    const principal = unique("vic");
    const created = await call("crawl", { url: "https://example.com", ms: 10 }, principal);
    const taskId = created.body.result?.taskId as string;
    let status = "working";
    for (let i = 0; i < 200 && status === "working"; i++) {
      await sleep(20);
      status = (await rpc("tasks/get", { taskId }, { path: PATH, principal })).body.result?.status;
    }
    expect(status).toBe("completed");
  });
});

const register = (config: Record<string, unknown>) => () =>
  new McpServer({ name: "x", version: "1" }).registerTask(
    "t",
    { inputSchema: z.object({}), ...config },
    async () => "ok",
  );

const plainServer = () => new McpServer({ name: "x", version: "1" });

/** Reads the operator API's limits view of the limits fixture. */
const read = async (query: string, token = "operator-token-0123456789abcdef0123456789") => {
  const response = await SELF.fetch(`http://fixture.test/limits/operator/limits${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

describe("GET <operator>/limits", () => {
  it("shows the named limits, and a principal's keys when asked", async () => {
    const principal = unique("wes");
    await call("any", {}, principal);
    await call("crawl", { url: "https://example.com" }, principal);
    const { status, body } = await read(`?principal=${principal}`);
    expect(status).toBe(200);
    expect(body.limiter).toBe("on");
    const byKey = Object.fromEntries(body.limits.map((l: { key: string }) => [l.key, l]));
    expect(byKey["named:crawl-api"]).toMatchObject({ limit: 2 });
    expect(byKey[`rate:principal:${principal}`]).toMatchObject({ windowCount: 2, queued: 0, inUse: 0 });
    expect(byKey[`principal:${principal}`]).toMatchObject({ limit: null, queued: 0 });
  });

  it("refuses an unknown parameter, and a caller without the token", async () => {
    expect((await read("?tool=x")).body.error).toMatchObject({ code: "unknown_filter" });
    expect((await read("", "wrong-token-0123456789abcdef0123456789ab")).status).toBe(401);
  });
});

describe("bad declarations are a TypeError at registration", () => {
  it.each([
    [{ concurrency: { limit: 0 } }, /concurrency.limit must be a positive integer/],
    [{ concurrency: { limit: 1.5 } }, /concurrency.limit must be a positive integer/],
    [{ concurrency: { limit: -1 } }, /concurrency.limit must be a positive integer/],
    [{ concurrency: { limit: 2, key: "tenant" } }, /concurrency.key must be a function/],
    [{ rateLimit: { limit: 0, period: "1 minute" } }, /rateLimit.limit must be a positive integer/],
    [{ rateLimit: { limit: 5, period: "soon" } }, /rateLimit.period: cannot read duration/],
    [{ rateLimit: { limit: 5, period: 0 } }, /rateLimit.period must be longer than 0 ms/],
    [{ priority: 3 }, /priority must be a function/],
  ])("%j", (config, message) => {
    expect(register(config)).toThrow(TypeError);
    expect(register(config)).toThrow(message);
  });

  it("in durableMcp's limits too", () => {
    expect(() => durableMcp(plainServer, { limits: { named: { api: { concurrent: 0 } } } })).toThrow(TypeError);
    expect(() => durableMcp(plainServer, { limits: { perPrincipal: { createsPerMinute: 2.5 } } })).toThrow(
      /createsPerMinute must be a positive integer/,
    );
  });
});
