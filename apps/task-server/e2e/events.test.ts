// External events over the wire (issue 13, done-when (b)): `await_approval` waits in step.waitForEvent until its
// Worker calls mcp.sendEvent (the demo's POST /events/<taskId>), then completes with the payload; and the same
// wait ended by a POST to a signed webhook link the task handed out.
import { describe, expect, inject, it } from "vitest";
import { demoClient, randomTaskId } from "./mcp-http.js";

const { url } = inject("wrangler");
const mcp = demoClient(url);
const origin = new URL(url).origin;

function sendEvent(taskId: string, body: unknown) {
  return fetch(`${origin}/events/${taskId}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

function postJson(link: string, body: string, contentType = "application/json") {
  return fetch(link, { method: "POST", headers: { "content-type": contentType }, body });
}

describe("external events under wrangler dev", () => {
  it("waits `working` until the Worker's sendEvent delivers, then completes with the payload", async () => {
    const created = await mcp.startTask("await_approval", {});
    const waiting = await mcp.pollTask(created.taskId, (task) => task.statusMessage !== undefined);
    expect(waiting.status).toBe("working");
    expect(waiting.statusMessage).toBe('waiting for event "approved" (step "approval")');

    // Refusals change nothing: a wrong type is buffered for a later wait, an unknown task is 404.
    const unknown = await sendEvent(randomTaskId(), { type: "approved" });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: "unknown_task" });
    expect((await sendEvent(created.taskId, { type: "" })).status).toBe(400);
    // Over the route's 512 KiB body bound: 413 before the body is read or anything is sent.
    const huge = await sendEvent(created.taskId, { type: "approved", payload: "x".repeat(600 * 1024) });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: "payload_too_large" });
    expect((await mcp.getTask(created.taskId)).status).toBe("working");

    const sent = await sendEvent(created.taskId, { type: "approved", payload: { by: "ada", ticket: 7 } });
    expect(sent.status).toBe(202);
    expect(await sent.json()).toEqual({ outcome: "delivered", step: "approval" });
    const done = await mcp.pollTask(created.taskId, (task) => task.status !== "working");
    expect(done.status).toBe("completed");
    expect(done.result).toMatchObject({
      content: [{ type: "text", text: 'Approved: {"by":"ada","ticket":7}' }],
      structuredContent: { approval: { by: "ada", ticket: 7 } },
    });

    const late = await sendEvent(created.taskId, { type: "approved" });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: "task_finished" });
  });

  it("completes with the body POSTed to its webhook link; a repeat gets the first answer, another body 409", async () => {
    const created = await mcp.startTask("await_approval", { webhook: true });
    const asked = await mcp.pollTask(created.taskId, (task) => task.status === "input_required");
    const request = asked.inputRequests?.["share link"] as { params?: { message?: string } } | undefined;
    const link = /POSTing JSON to (\S+)$/.exec(request?.params?.message ?? "")?.[1];
    expect(link).toMatch(
      new RegExp(`^${origin}/webhooks/${created.taskId}/[0-9a-f]{32}\\?type=approved&exp=\\d+&sig=`),
    );
    await mcp.updateTask(created.taskId, { "share link": { action: "accept", content: {} } });
    await mcp.pollTask(created.taskId, (task) => task.statusMessage?.startsWith("waiting for event") === true);

    const tampered = new URL(link!);
    tampered.searchParams.set("type", "rejected");
    expect((await postJson(tampered.toString(), "{}")).status).toBe(403);
    expect((await postJson(link!, "yes", "text/plain")).status).toBe(415);
    expect((await postJson(link!, "{oops")).status).toBe(400);
    expect((await postJson(link!, JSON.stringify("x".repeat(300 * 1024)))).status).toBe(413);

    const first = await postJson(link!, '{"approved":true}');
    expect(first.status).toBe(202);
    const answer = await first.json();
    expect(answer).toEqual({ outcome: "delivered", step: "approval", type: "approved" });
    const repeat = await postJson(link!, '{"approved":true}');
    expect(repeat.status).toBe(202);
    expect(await repeat.json()).toEqual(answer);
    expect((await postJson(link!, '{"approved":false}')).status).toBe(409);

    const done = await mcp.pollTask(created.taskId, (task) => !["working", "input_required"].includes(task.status));
    expect(done.status).toBe("completed");
    expect(done.result).toMatchObject({ structuredContent: { approval: { approved: true } } });
  });
});
