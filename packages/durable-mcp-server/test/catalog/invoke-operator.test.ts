// Child tasks through durableMcp (test/fixtures/catalog-app.ts): a tools/call task whose step.invoke starts another
// registered task, its input checked by the child's real schema; the child is a task of the same principal (in the
// catalog, readable with tasks/get, its parent under PARENT_TASK_META); GET /operator/tasks/:id/children lists it.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { newTaskId } from "../../src/ids.js";
import { PARENT_TASK_META } from "../../src/wire/meta-keys.js";
import { OPERATOR_TOKEN } from "../fixtures/catalog-app.js";
import { rpc } from "../jsonrpc.js";
import { applyCatalogMigrations, createCatalogTask, waitForRow } from "./helpers.js";

beforeAll(applyCatalogMigrations);

async function children(taskId: string): Promise<{ status: number; body: any }> {
  const response = await SELF.fetch(`http://fixture.test/catalog/operator/tasks/${taskId}/children`, {
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
  });
  return { status: response.status, body: await response.json() };
}

describe("child tasks in a deployment", () => {
  it("starts the child as a task of the same principal, visible to it, its operator and its catalog", async () => {
    const owner = `invoker-${newTaskId().slice(0, 8)}`;
    const taskId = await createCatalogTask("report_pack", { pages: 3 }, owner);
    const parentRow = await waitForRow(taskId, (row) => row?.status === "completed");
    expect(parentRow?.principal).toBe(owner);

    const listed = await children(taskId);
    expect(listed).toMatchObject({
      status: 200,
      body: { taskId, children: [{ step: "report", task: "build_report", status: "completed" }] },
    });
    const childId = listed.body.children[0].taskId as string;
    expect((await waitForRow(childId, (row) => row?.status === "completed"))?.principal).toBe(owner);
    const got = await rpc("tasks/get", { taskId: childId }, { principal: owner, path: "/catalog/mcp" });
    expect(got.body.result).toMatchObject({ taskId: childId, status: "completed" });
    expect(got.body.result!._meta[PARENT_TASK_META]).toEqual({ taskId, step: "report" });
    const result = await rpc("tasks/get", { taskId }, { principal: owner, path: "/catalog/mcp" });
    expect(result.body.result!.result.content).toEqual([{ type: "text", text: "sent 3 pages" }]);
    expect(await children(newTaskId())).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
  });

  it("refuses input that fails the child's schema at the call, starting nothing", async () => {
    const owner = `invoker-${newTaskId().slice(0, 8)}`;
    const taskId = await createCatalogTask("report_pack", { pages: "many" }, owner);
    const row = await waitForRow(taskId, (r) => r?.status === "completed");
    expect(row?.errorCode).toBe("handler_error");
    expect(await children(taskId)).toMatchObject({ status: 200, body: { children: [] } });
  });
});
