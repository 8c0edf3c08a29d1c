// step.webhookUrl over the wire fixture (the public API through durableMcp): the signed URL, its POST's checks in
// order, delivery once, the identical repeat, the different body, expiry, a finished task, and a replay's same URL.
import { runInDurableObject, SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { durableMcp } from "../../src/index.js";
import { MAX_EVENT_PAYLOAD_BYTES } from "../../src/limits.js";
import { EventInbox } from "../../src/runner/event-inbox.js";
import { testTasks, type TestTask } from "../../src/testing/index.js";
import { createServer } from "../fixtures/mcp-server.js";
import type { FixtureEnv } from "../fixtures/worker.js";

const fixtureEnv = env as unknown as FixtureEnv;
const kit = testTasks({
  url: "http://fixture.test/mcp",
  binding: fixtureEnv.MCP_TASK_RUNNER,
  principal: "alice",
  headers: { authorization: "Bearer alice" },
});

/** The URL the task's webhook step journaled (what the handler got, and would hand to a payment provider). */
async function webhookOf(task: TestTask): Promise<string> {
  await task.waitForStep("payment", "waiting");
  const row = await runInDurableObject(kit.runner(task.id), (_, state) =>
    state.storage.sql.exec<{ result: string }>("SELECT result FROM steps WHERE kind = 'webhook'").one(),
  );
  return (JSON.parse(row.result) as { url: string }).url;
}

function post(url: string, body: string, contentType = "application/json", method = "POST") {
  return SELF.fetch(url, { method, headers: { "content-type": contentType }, body: method === "GET" ? null : body });
}

function withParam(url: string, name: string, value: string): string {
  const changed = new URL(url);
  changed.searchParams.set(name, value);
  return changed.toString();
}

function textOf(task: { result?: unknown }): unknown {
  return JSON.parse((task.result as { content: Array<{ text: string }> }).content[0]!.text);
}

describe("step.webhookUrl", () => {
  it("refuses a bad POST with its own status and changes nothing, then delivers one body once", async () => {
    const task = await kit.start("webhook_payment");
    const url = await webhookOf(task);
    const { pathname, searchParams } = new URL(url);
    expect(pathname).toBe(`/webhooks/${task.id}/${pathname.split("/")[3]}`);
    expect(pathname.split("/")[3]).toMatch(/^[0-9a-f]{32}$/);
    expect(searchParams.get("type")).toBe("paid");

    expect((await post(url, "", "application/json", "GET")).status).toBe(405);
    expect((await post(url.replace(task.id, "x".repeat(32)), "{}")).status).toBe(403);
    expect((await post(`http://fixture.test/webhooks/${task.id}`, "{}")).status).toBe(404);
    expect((await post(withParam(url, "sig", "A".repeat(43)), "{}")).status).toBe(403);
    expect((await post(withParam(url, "type", "refunded"), "{}")).status).toBe(403);
    const later = String(Number(searchParams.get("exp")) + 3600);
    expect((await post(withParam(url, "exp", later), "{}")).status).toBe(403);
    expect((await post(url, '{"ok":true}', "text/plain")).status).toBe(415);
    const malformed = await post(url, "{not json");
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: "invalid_json" });
    const oversized = await post(url, JSON.stringify("x".repeat(MAX_EVENT_PAYLOAD_BYTES)));
    expect(oversized.status).toBe(413);
    expect(await oversized.json()).toMatchObject({ error: "payload_too_large" });
    // None of that reached the task.
    expect((await task.steps()).find((step) => step.name === "payment")).toMatchObject({ state: "waiting" });
    expect(
      await runInDurableObject(kit.runner(task.id), (_, state) => new EventInbox(state.storage.sql).counts()),
    ).toEqual({});

    const first = await post(url, '{"amount": 42}');
    expect(first.status).toBe(202);
    const answer = await first.json();
    expect(answer).toEqual({ outcome: "delivered", step: "payment", type: "paid" });
    // The same JSON again (formatted otherwise) gets the first answer; another body is a conflict.
    const repeat = await post(url, '{ "amount" : 42 }');
    expect(repeat.status).toBe(202);
    expect(await repeat.json()).toEqual(answer);
    const different = await post(url, '{"amount": 43}');
    expect(different.status).toBe(409);
    expect(await different.json()).toMatchObject({ error: "already_delivered" });

    const done = await task.waitFor("completed");
    // The run after the delivery replayed the webhook step: it returned the URL it journaled, not a new one.
    expect(textOf(done)).toEqual({ url, payload: { amount: 42 } });
    expect((await task.steps()).map(({ name, kind, state }) => ({ name, kind, state }))).toEqual([
      { name: "callback", kind: "webhook", state: "done" },
      { name: "payment", kind: "event", state: "done" },
    ]);
    // After the task finished, the repeat still gets its first answer.
    expect((await post(url, '{"amount":42}')).status).toBe(202);
  });

  it("answers 401 once the URL expired, and 410 once the task finished", async () => {
    const expired = await kit.start("webhook_payment", { expiresInMs: 1 });
    const expiredUrl = await webhookOf(expired);
    const refused = await post(expiredUrl, "{}");
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: "expired" });

    const cancelled = await kit.start("webhook_payment");
    const url = await webhookOf(cancelled);
    await cancelled.cancel();
    const gone = await post(url, "{}");
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({ error: "task_finished" });
  });

  it("serves no webhook path in a deployment without its secret", async () => {
    const task = await kit.start("webhook_payment");
    const url = await webhookOf(task);
    const unsigned = durableMcp(createServer, { binding: "MCP_TASK_RUNNER", webhooks: { secret: "NO_SUCH_SECRET" } });
    expect((await unsigned.fetch(new Request(url, { method: "POST", body: "{}" }), fixtureEnv)).status).toBe(404);
  });
});

describe("mcp.sendEvent through the public API", () => {
  it("a task waiting in step.waitForEvent completes with the payload its Worker sends", async () => {
    const { wireApp } = await import("../fixtures/mcp-server.js");
    const task = await kit.start("approval");
    await task.waitForStep("approval", "waiting");
    expect(
      await wireApp.sendEvent(
        fixtureEnv,
        task.id,
        { type: "approved", payload: { by: "ada" } },
        { trustedSender: true },
      ),
    ).toEqual({
      outcome: "delivered",
      step: "approval",
    });
    expect(textOf(await task.waitFor("completed"))).toEqual({ by: "ada" });
  });

  it("the kit's wake() leaves an event wait alone unless it is named; named, the wait times out", async () => {
    const task = await kit.start("approval");
    await task.waitForStep("approval", "waiting");
    await expect(task.wake()).rejects.toThrow(/waits on no sleep or retry back-off/);
    expect(await task.wake("approval")).toEqual(["approval"]);
    const done = await task.waitFor("completed");
    expect(done.result).toMatchObject({ isError: true });
    expect(JSON.stringify(done.result)).toContain("EventTimeoutError");
    expect((await task.steps())[0]).toMatchObject({ name: "approval", kind: "event", state: "failed" });
  });

  it("the testing kit's sendEvent reaches the task as the kit's principal", async () => {
    const task = await kit.start("approval");
    // The first run starts right after the create (no alarm hop), so wait for its wait: the outcome is then certain.
    await task.waitForStep("approval", "waiting");
    expect(await task.sendEvent({ type: "approved", payload: "from the kit" })).toEqual({
      outcome: "delivered",
      step: "approval",
    });
    expect(textOf(await task.waitFor("completed"))).toBe("from the kit");
    const other = testTasks({ url: "http://fixture.test/mcp", binding: fixtureEnv.MCP_TASK_RUNNER, principal: "bob" });
    await expect(other.task(task.id).sendEvent({ type: "approved" })).rejects.toMatchObject({
      name: "EventRefusedError",
      reason: "unknown_task",
    });
  });
});
