// Push notifications for tasks over raw HTTP: `subscriptions/listen` with `notifications.taskIds` streams
// `notifications/tasks` for a running `send_report`, which is answered through `tasks/update` mid-stream.
import { sseMessages, SUBSCRIPTION_ID, type JsonObject, type JsonRpcMessage } from "@durable-mcp/test-harness";
import { describe, expect, inject, it } from "vitest";
import { demoClient, randomTaskId, renderedPages } from "./mcp-http.js";

const mcp = demoClient(inject("wrangler").url);

async function listen(id: number, taskIds: string[]) {
  const params: JsonObject = { notifications: { taskIds }, _meta: mcp.envelope() };
  const { response } = await mcp.post("subscriptions/listen", params, { id });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/event-stream");
  if (!response.body) throw new Error("subscriptions/listen answered without a body");
  return sseMessages(response.body);
}

describe("subscriptions/listen for tasks (push notifications)", () => {
  it("streams the task through input_required (answered with tasks/update) to completed, then ends", async () => {
    const created = await mcp.startTask("send_report", { to: "dave@example.com", pages: 4, secondsPerPage: 0.5 });
    const taskId = created.taskId;
    const stranger = randomTaskId();
    const listenId = 4242;
    const stream = await listen(listenId, [taskId, stranger]);

    const frames: JsonRpcMessage[] = [];
    const tasks: JsonObject[] = [];
    let answered = false;
    let final: JsonRpcMessage | undefined;
    for await (const message of stream) {
      frames.push(message);
      if (message.method === "notifications/tasks") {
        const task = message.params ?? {};
        tasks.push(task);
        // Every notification carries the listen's subscription id and the full task.
        expect(task._meta).toMatchObject({ [SUBSCRIPTION_ID]: listenId });
        expect(task.taskId).toBe(taskId);
        expect(task.createdAt).toBe(created.createdAt);
        if (task.status === "input_required" && !answered) {
          const inputRequests = task.inputRequests as Record<string, JsonObject>;
          expect(Object.keys(inputRequests)).toEqual(["confirm send"]);
          expect(inputRequests["confirm send"]).toMatchObject({
            method: "elicitation/create",
            params: { message: "Send the 4-page report to dave@example.com?" },
          });
          const ack = await mcp.updateTask(taskId, { "confirm send": { action: "accept", content: { send: true } } });
          expect(ack.resultType).toBe("complete");
          answered = true;
        }
      } else if (message.id !== undefined) {
        final = message;
      }
    }

    // First frame: the acknowledgement, listing only the task this caller owns.
    expect(frames[0]).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { notifications: { taskIds: [taskId] }, _meta: { [SUBSCRIPTION_ID]: listenId } },
    });

    // Then the task's changes: working with growing progress, input_required, and completed with its result.
    expect(answered).toBe(true);
    const statuses = tasks.map((task) => task.status);
    expect(["working", "input_required"]).toContain(statuses[0]);
    expect(statuses).toContain("input_required");
    expect(statuses.at(-1)).toBe("completed");
    expect(statuses.filter((status) => status === "completed")).toHaveLength(1);
    const counts = tasks.map((task) => renderedPages(task.statusMessage)).filter((n): n is number => n !== null);
    expect(counts.length).toBeGreaterThan(0);
    expect(counts).toEqual(counts.toSorted((a, b) => a - b));
    expect(counts.at(-1)).toBe(4);
    expect(tasks.at(-1)?.result).toMatchObject({
      content: [{ type: "text", text: "Sent 4 pages to dave@example.com." }],
      structuredContent: { pages: 4 },
      resultType: "complete",
    });

    // Last: the listen's own JSON-RPC result, after the completed notification; then the stream ended.
    expect(frames.at(-1)).toBe(final);
    expect(final).toMatchObject({
      jsonrpc: "2.0",
      id: listenId,
      result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID]: listenId } },
    });
    expect(frames.at(-2)?.params?.status).toBe("completed");
  });

  it("leaves an id that no task has out of the acknowledgement, and ends at once when nothing is left", async () => {
    const listenId = 77;
    const frames: JsonRpcMessage[] = [];
    for await (const message of await listen(listenId, [randomTaskId()])) frames.push(message);

    expect(frames).toEqual([
      {
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: { notifications: { taskIds: [] }, _meta: { [SUBSCRIPTION_ID]: listenId } },
      },
      { jsonrpc: "2.0", id: listenId, result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID]: listenId } } },
    ]);
  });
});
