// The task page in a real browser (Debian chromium, playwright-core) against the demo Worker under `wrangler dev`:
// bad server URLs, a schema failure, send_report followed to its question, answered through the generated form and
// completed; a second task cancelled; the task's JSON-RPC log; the task list after a reload. The page's MCP client is
// its agent (a Durable Object of the Worker), so every MCP request is made there, not by the browser.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, screenshots, WAIT, type Browser } from "./browser.ts";

const { origin, chromium: executablePath, listedPort } = inject("demo");

let browser: Browser;
let page: Page;
let pageErrors: string[];
/**
 * An MCP server without the Tasks extension, on this machine: the agent in wrangler dev reaches it by fetch (its URL
 * is one WATCHER_SERVERS lists in test/setup.ts).
 */
let bare: Server;
let bareUrl = "";
const bareRequests: string[] = [];

function bareResult(method: string) {
  return method === "server/discover"
    ? {
        supportedVersions: ["2026-07-28"],
        capabilities: { tools: {} },
        resultType: "complete",
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "bare", version: "0.0.1" } },
      }
    : { tools: [{ name: "echo", inputSchema: { type: "object", properties: {} } }], resultType: "complete" };
}

beforeAll(async () => {
  // A fresh profile per run: no state from an earlier run leaks in.
  browser = await launchBrowser(executablePath);
  ({ page, pageErrors } = browser);
  bare = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const request = JSON.parse(body) as { id: number; method: string };
      bareRequests.push(request.method);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: request.id, result: bareResult(request.method) }));
    });
  });
  await new Promise<void>((resolve) => bare.listen(listedPort, "127.0.0.1", resolve));
  bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/bare/mcp`;
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => bare?.close(resolve));
});

const card = (taskId: string): Locator => page.locator(`[data-testid="task-card"][data-task-id="${taskId}"]`);

/** Picks a listed server (the page offers no free URL field) and connects. */
async function connect(url: string) {
  await page.selectOption("#server-url", url);
  await page.getByRole("button", { name: "Connect", exact: true }).click();
}

/** Fills send_report's generated form and starts it; returns the new task's id. */
async function startReport(to: string, pages: number, secondsPerPage: number): Promise<string> {
  const before = await page.locator('[data-testid="task-card"]').count();
  await page.fill("#arg-to", to);
  await page.fill("#arg-pages", String(pages));
  await page.fill("#arg-secondsPerPage", String(secondsPerPage));
  await page.getByRole("button", { name: "Start task" }).click();
  await expect.poll(() => page.locator('[data-testid="task-card"]').count(), WAIT).toBe(before + 1);
  const taskId = await page.locator('[data-testid="task-card"]').first().getAttribute("data-task-id");
  expect(taskId).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  await expect.poll(() => page.getByTestId("start-outcome").textContent()).toContain(`as task ${taskId}`);
  return taskId ?? "";
}

const statusOf = (taskId: string) => card(taskId).getByTestId("task-status").textContent();

describe("the task page", () => {
  let reportId = "";
  let cancelledId = "";

  it("says what went wrong with a bad server URL, and offers the next step", async () => {
    await page.goto(`${origin}/`);
    await expect.poll(() => page.locator("h1").textContent()).toContain("durable-mcp-server");
    expect(await page.locator("#server-url").inputValue()).toBe(`${origin}/mcp`);
    // The page connects to its own (open, loopback) server by itself: no Connect press.
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");

    // Nothing listens there.
    await connect("http://127.0.0.1:9/mcp");
    const error = page.getByTestId("connect-error");
    await error.waitFor(WAIT);
    expect(await error.textContent()).toContain("Could not reach http://127.0.0.1:9/mcp");
    expect(await error.textContent()).toContain("Next:");
    await page.screenshot({ path: join(screenshots, "1-unreachable.png"), fullPage: true });

    // Something answers, but not MCP.
    await connect(`${origin}/healthz`);
    await expect
      .poll(() => error.textContent(), WAIT)
      .toContain(`${origin}/healthz answered server/discover, but not as an MCP server`);

    // An MCP server without the Tasks extension: a plain HTTP server of this test, which the agent (not the browser)
    // asks.
    await connect(bareUrl);
    const noTasks = page.getByTestId("no-tasks");
    await noTasks.waitFor(WAIT);
    expect(await noTasks.textContent()).toContain("does not offer the MCP Tasks extension");
    expect(await page.getByTestId("connected").textContent()).toContain("bare 0.0.1");
    expect(await page.getByTestId("tool-echo").count()).toBe(1);
    expect(bareRequests).toEqual(["server/discover", "tools/list"]);
    await page.screenshot({ path: join(screenshots, "1-no-tasks-extension.png"), fullPage: true });
    await page.getByRole("button", { name: "this page's own" }).click();
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");
    expect(await page.getByTestId("no-tasks").count()).toBe(0);

    // Back to a bad URL; the offered next step: this page's own server.
    await connect("http://127.0.0.1:9/mcp");
    await error.waitFor(WAIT);
    await page.getByRole("button", { name: /Use this page's server/ }).click();
    await page.getByTestId("connected").waitFor(WAIT);
    expect(await page.getByTestId("connected").textContent()).toContain("task-server 1.0.0");
    expect(await page.getByTestId("connected").textContent()).toContain("Tasks extension: yes");
    expect(await page.getByTestId("connect-error").count()).toBe(0);
  });

  it("lists the tools and refuses an input that fails the schema before sending it", async () => {
    for (const name of ["ping", "send_report", "export_contacts"]) {
      expect(await page.getByTestId(`tool-${name}`).count()).toBe(1);
    }
    await page.getByTestId("tool-send_report").click();
    // The form comes from the input schema, with its defaults.
    expect(await page.locator("#arg-pages").inputValue()).toBe("5");
    expect(await page.locator("#arg-secondsPerPage").inputValue()).toBe("1");
    await page.fill("#arg-to", "not-an-email");
    await page.fill("#arg-pages", "0");
    await page.getByRole("button", { name: "Start task" }).click();
    const invalid = page.getByTestId("arg-invalid");
    await invalid.waitFor(WAIT);
    expect(await invalid.textContent()).toContain("to must be an email address");
    expect(await invalid.textContent()).toContain("pages must be at least 1");
    expect(await invalid.textContent()).toContain("Correct the marked fields");
    expect(await page.locator('[data-testid="task-card"]').count()).toBe(0);
    await page.screenshot({ path: join(screenshots, "2-invalid-input.png"), fullPage: true });
  });

  it("starts send_report, shows its progress, answers its question through the generated form, and completes", async () => {
    reportId = await startReport("ada@example.com", 2, 0.2);
    const task = card(reportId);

    // Progress: the last page rendered, then the question.
    await expect.poll(() => task.getByTestId("task-message").textContent(), WAIT).toBe("rendered 2/2 pages");
    expect(await task.getByTestId("task-progress").getAttribute("value")).toBe("1");
    const question = task.getByTestId("question");
    await question.waitFor(WAIT);
    expect(await statusOf(reportId)).toBe("input required");
    expect(await question.textContent()).toContain("Send the 2-page report to ada@example.com?");
    await page.screenshot({ path: join(screenshots, "3-input-required.png"), fullPage: true });

    // The answer form comes from the requestedSchema: one boolean "Send it".
    await question.getByLabel("Send it *").check();
    await question.getByRole("button", { name: "Send answer" }).click();

    await expect.poll(() => statusOf(reportId), WAIT).toBe("completed");
    expect(await task.getByTestId("task-result").textContent()).toBe("Sent 2 pages to ada@example.com.");
    expect(await task.getByTestId("question").count()).toBe(0);
    await page.screenshot({ path: join(screenshots, "4-completed.png"), fullPage: true });
  });

  it("cancels a running task: cancellation requested, then cancelled", async () => {
    cancelledId = await startReport("bob@example.com", 30, 1);
    expect(cancelledId).not.toBe(reportId);
    await expect.poll(() => statusOf(cancelledId), WAIT).toBe("working");
    await card(cancelledId).getByTestId("cancel").click();
    await expect.poll(() => statusOf(cancelledId), WAIT).toMatch(/^(cancellation requested|cancelled)$/);
    await expect.poll(() => statusOf(cancelledId), WAIT).toBe("cancelled");
    expect(await card(cancelledId).getByTestId("task-result").textContent()).toBe("The task was cancelled.");
    expect(await card(cancelledId).getByTestId("cancel").count()).toBe(0);
    // The first task is untouched.
    expect(await statusOf(reportId)).toBe("completed");
  });

  it("shows a task's raw JSON-RPC log at /task/<id>, also after a reload", async () => {
    await card(reportId).getByRole("link", { name: "details and JSON-RPC log" }).click();
    await page.waitForURL(`${origin}/task/${reportId}`);
    // The log starts collapsed; opened, each exchange is pretty-printed (compared here without the whitespace).
    const section = page.getByTestId("rpc-log-section");
    await section.waitFor(WAIT);
    expect(await section.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
    await section.locator("summary").first().click();
    const log = page.getByTestId("rpc-log");
    await log.waitFor(WAIT);
    const raw = (await log.textContent()) ?? "";
    expect(raw).toContain('"method": "tools/call"');
    const text = raw.replace(/\n\s*/g, "").replace(/": /g, '":');
    expect(text).toContain('"method":"tools/call"');
    expect(text).toContain('"name":"send_report"');
    expect(text).toContain('"method":"tasks/get"');
    expect(text).toContain('"method":"tasks/update"');
    expect(text).toContain('"confirm send":{"action":"accept","content":{"send":true}}');
    expect(text).toContain('"status":"input_required"');
    expect(text).toContain('"status":"completed"');
    // The agent reached its own Worker's /mcp in-process, not by fetching itself.
    expect(text).toContain(`POST ${origin}/mcp (in-process) · tasks/get`);
    await page.screenshot({ path: join(screenshots, "5-task-log.png"), fullPage: true });

    // A reload of /task/<id> gets the page again (single-page fallback) with the same task and log.
    await page.reload();
    await page.getByTestId("rpc-log-section").locator("summary").first().click();
    await page.getByTestId("rpc-log").waitFor(WAIT);
    await expect.poll(() => statusOf(reportId), WAIT).toBe("completed");
    expect(await page.getByTestId("rpc-log").textContent()).toContain('"method": "tasks/update"');
  });

  it("keeps the tasks list across a reload; the agent supplies their state", async () => {
    await page.goto(`${origin}/`);
    await page.reload();
    await expect.poll(() => page.locator('[data-testid="task-card"]').count(), WAIT).toBe(2);
    const ids = await page
      .locator('[data-testid="task-card"]')
      .evaluateAll((cards) => cards.map((c) => c.getAttribute("data-task-id")));
    expect(ids).toEqual([cancelledId, reportId]);
    await expect.poll(() => statusOf(reportId), WAIT).toBe("completed");
    await expect.poll(() => statusOf(cancelledId), WAIT).toBe("cancelled");
    expect(await card(reportId).getByTestId("task-result").textContent()).toBe("Sent 2 pages to ada@example.com.");
    await page.screenshot({ path: join(screenshots, "6-after-reload.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
