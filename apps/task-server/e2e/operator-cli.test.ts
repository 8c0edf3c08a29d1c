// The operator CLI as a user runs it (`node …/bin/durable-mcp.mjs`, the package's `durable-mcp` bin) against the demo
// Worker under `wrangler dev`: its task catalog on local D1, its operator API on loopback without a token (no
// OPERATOR_TOKEN secret set). Tasks are created over MCP; list, filters, get, stats, stuck, cancel one, bulk cancel
// with a dry run and progress, and the audit log that names who did it; documented exit codes. Part 2: pause and
// resume, retry, restart from a step (one task and by filter, with progress). The fair-share limits (the demo's
// shared "archive-uploads" limit) with every column the API gives.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { workspaceRoot } from "@durable-mcp/test-harness";
import { describe, expect, inject, it } from "vitest";
import { demoClient } from "./mcp-http.js";

const { url } = inject("wrangler");
const mcp = demoClient(url);
const origin = new URL(url).origin;
const CLI = join(workspaceRoot, "packages/durable-mcp-server/bin/durable-mcp.mjs");

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)("node", [CLI, ...args, "--url", origin], {
      env: { ...process.env, DURABLE_MCP_OPERATOR_TOKEN: "" },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function cliJson(...args: string[]): Promise<any> {
  const result = await cli(...args, "--json");
  if (result.code !== 0) throw new Error(`durable-mcp ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** Polls the CLI's list until `done` holds (the catalog follows its runners a moment later). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await read();
    if (done(value) || i > 200) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The demo's shared limit (export_contacts names it) in a `limits --json` answer. */
const named = (answer: any) => answer.limits.find((l: { key: string }) => l.key === "named:archive-uploads");

describe("durable-mcp CLI against wrangler dev", () => {
  it("lists a tool's tasks by tag and status, shows one, counts them, and cancels one with an audit entry", async () => {
    const domain = `d${Date.now()}.example`;
    const report = await mcp.startTask("send_report", { to: `ops@${domain}`, pages: 1, secondsPerPage: 0 });
    const approval = await mcp.startTask("await_approval", {});

    const listed = await until(
      () => cliJson("tasks", "list", "--tool", "send_report", "--tag", `domain=${domain}`, "--since", "1h"),
      (page) => page.tasks.length === 1,
    );
    expect(listed.tasks[0]).toMatchObject({ taskId: report.taskId, tool: "send_report", tags: { domain } });

    const table = await cli("tasks", "list", "--tool", "send_report", "--tag", `domain=${domain}`);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^TASK\s+TOOL\s+STATUS/);
    expect(table.stdout).toContain(report.taskId);

    const detail = await cliJson("tasks", "get", approval.taskId);
    expect(detail).toMatchObject({ tool: "await_approval", task: { taskId: approval.taskId } });

    const stats = await cliJson("stats", "--tool", "await_approval");
    expect(stats.byStatus.working).toBeGreaterThanOrEqual(1);
    expect((await cli("stats")).stdout).toMatch(/^TOOL\s+WORKING\s+INPUT_REQUIRED/);

    const cancelled = await cliJson("tasks", "cancel", approval.taskId);
    expect(cancelled.results).toEqual([{ taskId: approval.taskId, status: "cancelled" }]);
    const audit = await cliJson("audit");
    expect(audit.entries[0]).toMatchObject({ actor: "local", action: "cancel", taskIds: [approval.taskId] });
    expect((await cliJson("tasks", "stuck")).tasks).toEqual(expect.any(Array));
  });

  it("cancels a runaway batch by filter with a dry run first, progress, and none missed", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await mcp.startTask("await_approval", { timeoutMinutes: 1440 })).taskId);
    const since = "10m";
    await until(
      () =>
        cliJson("tasks", "list", "--tool", "await_approval", "--status", "working", "--since", since, "--limit", "500"),
      (page) => ids.every((id) => page.tasks.some((t: { taskId: string }) => t.taskId === id)),
    );
    const where = ["--where", "tool=await_approval", "--where", "status=working", "--where", `createdAfter=${since}`];
    const dry = await cliJson("tasks", "cancel", ...where, "--dry-run");
    expect(dry.count).toBeGreaterThanOrEqual(ids.length);

    const bulk = await cli("tasks", "cancel", ...where);
    expect(bulk.code).toBe(0);
    expect(bulk.stdout).toMatch(/cancelled (\d+) of \1/);
    for (const id of ids) expect((await mcp.getTask(id)).status).toBe("cancelled");
    const audit = await cliJson("audit");
    const finished = audit.entries.find((e: { action: string }) => e.action === "bulk_cancel_finished");
    expect(finished.actor).toBe("local");
    expect(ids.every((id) => finished.taskIds.includes(id))).toBe(true);
  });

  it("restarts a failed send from the failing step (kept pages and answer), retries, and restarts by filter", async () => {
    const failedSend = async () => {
      const { taskId } = await mcp.startTask("send_report", {
        to: "ops@invalid.example",
        pages: 2,
        secondsPerPage: 0,
      });
      await mcp.pollTask(taskId, (task) => task.status === "input_required");
      await mcp.updateTask(taskId, { "confirm send": { action: "accept", content: { send: true } } });
      return (await mcp.pollTask(taskId, (task) => task.status === "completed")).taskId;
    };
    const original = await failedSend();
    const restarted = await cliJson("tasks", "restart", original, "--from-step", "send");
    const [result] = restarted.results;
    expect(result).toMatchObject({ taskId: original, newTaskId: expect.any(String), fromStep: "send" });
    // The new task asks nothing again: the pages and the answer were kept, only `send` ran (and failed again).
    const again = await mcp.pollTask(result.newTaskId, (task) => task.status === "completed");
    expect(JSON.stringify(again)).toContain("does not exist");
    const steps = await cliJson("tasks", "get", result.newTaskId);
    expect(steps.task._meta["durable-mcp-server/links"]).toEqual({
      restartedFrom: { taskId: original, fromStep: "send" },
    });
    expect(steps.task._meta["durable-mcp-server/steps"].steps.map((s: { name: string }) => s.name)).toEqual([
      "render page 1",
      "render page 2",
      "confirm send",
      "send",
    ]);
    const text = await cli("tasks", "retry", original);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${original}: retried as \\S+`));

    // By filter: every failed send of the last minutes, from the failing step, with a dry run and progress.
    const batch = [await failedSend(), await failedSend()];
    const where = [
      "--where",
      "tool=send_report",
      "--where",
      "tag=domain=invalid.example",
      "--where",
      "createdAfter=10m",
    ];
    await until(
      () =>
        cliJson("tasks", "list", "--tool", "send_report", "--status", "completed", "--since", "10m", "--limit", "500"),
      (page) => batch.every((id) => page.tasks.some((t: { taskId: string }) => t.taskId === id)),
    );
    const dry = await cliJson("tasks", "restart", ...where, "--from-step", "send", "--dry-run");
    expect(dry.count).toBeGreaterThanOrEqual(2);
    const bulk = await cli("tasks", "restart", ...where, "--from-step", "send");
    expect(bulk.code).toBe(0);
    expect(bulk.stdout).toMatch(/restarted (\d+) of \1/);
    expect(bulk.stderr).toContain("restarting [");
    const audit = await cliJson("audit");
    const finished = audit.entries.find((e: { action: string }) => e.action === "bulk_restart_finished");
    expect(batch.every((id) => finished.taskIds.includes(id))).toBe(true);
  });

  it("pauses and resumes a task (input_required stays so), and refuses a final one with exit code 8", async () => {
    const { taskId } = await mcp.startTask("send_report", { to: "ops@pause.example", pages: 1, secondsPerPage: 0 });
    await mcp.pollTask(taskId, (task) => task.status === "input_required");
    const paused = await cliJson("tasks", "pause", taskId);
    expect(paused.results).toEqual([{ taskId, status: "input_required", changed: true }]);
    await mcp.updateTask(taskId, { "confirm send": { action: "accept", content: { send: true } } });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // The answer is kept, but the paused task does not go on to `send`.
    expect((await mcp.getTask(taskId)).status).toBe("working");
    expect((await mcp.getTask(taskId)).statusMessage).toMatch(/^paused by an operator/);
    expect((await cli("tasks", "resume", taskId)).stdout).toContain(`${taskId}: resumed`);
    expect((await mcp.pollTask(taskId, (task) => task.status === "completed")).status).toBe("completed");
    const final = await cli("tasks", "pause", taskId);
    expect(final.code).toBe(8);
    expect(final.stdout).toContain(`${taskId}: conflict:`);
    const audit = await cliJson("audit");
    const actions = audit.entries.filter((e: { target: { taskId?: string } }) => e.target.taskId === taskId);
    expect(actions.map((e: { action: string }) => e.action)).toEqual(["resume", "pause"]);
  });

  it("shows the fair-share limits per key, the rate columns included", async () => {
    // export_contacts names the shared "archive-uploads" limit (20): a long export holds one of its slots.
    const { taskId } = await mcp.startTask("export_contacts", {
      bucket: "contacts-archive",
      batches: 20,
      secondsPerBatch: 60,
    });
    try {
      const json = await until(
        () => cliJson("limits"),
        (answer) => named(answer)?.inUse >= 1,
      );
      expect(json.limiter).toBe("on");
      // A concurrency limit only: no rate window, and none waits for one.
      expect(named(json)).toMatchObject({ limit: 20, windowCount: null, rateWaiting: 0 });
      const table = (await cli("limits")).stdout;
      expect(table).toMatch(/^KEY\s+LIMIT\s+IN USE\s+QUEUED\s+WAITS\s+OLDEST WAIT\s+RATE WINDOW\s+RATE WAITING$/m);
      expect(table).toMatch(/^named:archive-uploads\s+20\s+[1-9]\d*\s+\d+\s+\d+\s+\S+\s+-\s+0$/m);
    } finally {
      await mcp.cancelTask(taskId);
    }
  });

  it("exits with the documented codes", async () => {
    expect((await cli("tasks", "restart", "sometask")).code).toBe(2);
    expect((await cli("tasks", "pause", "--where", "tool=send_report", "--from-step", "x")).code).toBe(2);
    expect((await cli("tasks", "retry", "nosuchtask0000000000000000000000")).code).toBe(4);
    expect((await cli("tasks", "get", "nosuchtask0000000000000000000000")).code).toBe(4);
    expect((await cli("tasks", "cancel", "--where")).code).toBe(2);
    expect((await cli("tasks", "frobnicate")).code).toBe(2);
    const bad = await cli("tasks", "list", "--status", "stuck");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("invalid_filter");
    const noFilter = await cli("tasks", "cancel", "--where", "colour=red");
    expect(noFilter.code).toBe(1);
    expect(noFilter.stderr).toContain("unknown_filter");
    const unreachable = await promisify(execFile)("node", [CLI, "stats", "--url", "http://127.0.0.1:9"]).catch(
      (error: { code: number }) => error,
    );
    expect((unreachable as { code: number }).code).toBe(7);
  });
});
