// The page's agent (TaskWatcher, a Durable Object of the demo Worker) in a real browser: it follows a task to its end
// while no page is open, and a crash and restart of the dev server loses nothing (the page reconnects to the same
// agent, with its connection and tasks, and the task waiting for an answer is answered and completes); while the
// server is down the page shows its live task as stale (not live, Cancel disabled, no question form).
import { join } from "node:path";
import { WranglerDev } from "@durable-mcp/test-harness";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, screenshots, WAIT, type Browser } from "./browser.ts";

const { origin, chromium: executablePath, server } = inject("demo");
/** Long enough for a crashed `wrangler dev` to be started again and the page's socket to retry. */
const RECONNECT = { timeout: 90_000 };

let browser: Browser;
let page: Page;
let pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchBrowser(executablePath);
  ({ page, pageErrors } = browser);
});

afterAll(async () => {
  await browser?.close();
});

const card = (taskId: string): Locator => page.locator(`[data-testid="task-card"][data-task-id="${taskId}"]`);
const statusOf = (taskId: string) => card(taskId).getByTestId("task-status").textContent();

interface AgentState {
  tasks: Array<{ record: { taskId: string }; snapshot?: { status: string }; polledAt?: string }>;
}

/**
 * The agent's state over HTTP (GET /agents/task-watcher/<name>): what it knows, with no page asking. The request
 * carries the browser's session cookie (the agent's secret; without it the route answers 403).
 */
async function agentState(session: string): Promise<AgentState> {
  const cookie = (await browser.context.cookies(`${origin}/agents/`)).map((c) => `${c.name}=${c.value}`).join("; ");
  const res = await fetch(`${origin}/agents/task-watcher/${session}`, { headers: { cookie } });
  expect(res.status).toBe(200);
  return (await res.json()) as AgentState;
}

async function startTool(tool: string, fields: Record<string, string>): Promise<string> {
  const before = await page.locator('[data-testid="task-card"]').count();
  await page.getByTestId(`tool-${tool}`).click();
  for (const [id, value] of Object.entries(fields)) await page.fill(`#arg-${id}`, value);
  await page.getByRole("button", { name: "Start task" }).click();
  await expect.poll(() => page.locator('[data-testid="task-card"]').count(), WAIT).toBe(before + 1);
  const taskId = (await page.locator('[data-testid="task-card"]').first().getAttribute("data-task-id")) ?? "";
  await expect.poll(() => page.getByTestId("start-outcome").textContent(), WAIT).toContain(`as task ${taskId}`);
  return taskId;
}

describe("the page's agent", () => {
  let session = "";
  let exportId = "";

  it("follows a task to its end while no page is open, and shows the final state when the page comes back", async () => {
    await page.goto(`${origin}/`);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");
    session = (await page.getByTestId("agent-name").textContent()) ?? "";
    expect(session).toMatch(/^[0-9a-f]{32}$/);

    exportId = await startTool("export_contacts", { bucket: "contacts-archive", batches: "4", secondsPerBatch: "1" });
    await expect.poll(() => statusOf(exportId), WAIT).toBe("working");

    // No page: the agent's schedules keep asking tasks/get until the task is final.
    await page.close();
    const closedAt = new Date().toISOString();
    await expect
      .poll(async () => (await agentState(session)).tasks.find((t) => t.record.taskId === exportId)?.snapshot?.status, {
        timeout: 60_000,
      })
      .toBe("completed");
    const reopenedAt = new Date().toISOString();

    page = await browser.context.newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${origin}/task/${exportId}`);
    await expect.poll(() => statusOf(exportId), WAIT).toBe("completed");
    expect(await card(exportId).getByTestId("task-result").textContent()).toBe(
      "Exported 400 contacts to contacts-archive/contacts.csv.",
    );
    // The tasks/get that saw it completed was the agent's, made while the page was closed.
    await page.getByTestId("rpc-log-section").locator("summary").first().click();
    const log = page.getByTestId("rpc-log");
    await log.waitFor(WAIT);
    const polls = await log.locator("li").evaluateAll((items) =>
      // The entry's summary line; its pretty-printed JSON compared without the whitespace.
      items.map((item) => ({
        head: item.querySelector("summary")?.textContent ?? "",
        text: (item.textContent ?? "").replace(/\n\s*/g, "").replace(/": /g, '":'),
      })),
    );
    const final = polls.find(
      (entry) => entry.head.includes("tasks/get") && entry.text.includes('"status":"completed"'),
    );
    expect(final).toBeDefined();
    const at = final?.head.split(" · ")[0] ?? "";
    expect(at > closedAt && at < reopenedAt).toBe(true);
    await page.screenshot({ path: join(screenshots, "15-followed-without-page.png"), fullPage: true });
  });

  it("loses nothing when the dev server crashes and restarts: the page reconnects to the same agent and its tasks", async () => {
    await page.goto(`${origin}/`);
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");
    const reportId = await startTool("send_report", { to: "grace@example.com", pages: "2", secondsPerPage: "0.2" });
    const question = card(reportId).getByTestId("question");
    await question.waitFor(WAIT);
    expect(await statusOf(reportId)).toBe("input required");

    const dev = WranglerDev.attach(server);
    await dev.stop("SIGKILL");
    // The page keeps what it last had, and says the agent is out of reach.
    await expect.poll(() => page.getByTestId("agent-status").textContent(), WAIT).toContain("Agent reconnecting");
    expect(await statusOf(reportId)).toBe("input required");
    // Visibly stale, not live: the card says so, Cancel is disabled, the question's form is hidden (an answer could
    // not be sent), and the server line no longer says "Connected".
    const report = card(reportId);
    expect(await report.getAttribute("class")).toContain("stale");
    expect(await report.getByTestId("task-stale").textContent()).toMatch(/^Not live/);
    expect(await report.getByTestId("cancel").isDisabled()).toBe(true);
    expect(await question.count()).toBe(0);
    expect(await page.getByTestId("connected").textContent()).toMatch(/^Last connected to task-server 1\.0\.0/);
    // A final task is not marked: what it shows cannot change.
    expect(await card(exportId).getByTestId("task-stale").count()).toBe(0);
    await page.screenshot({ path: join(screenshots, "16-server-down.png"), fullPage: true });
    await dev.start();

    await expect.poll(() => page.getByTestId("agent-status").textContent(), RECONNECT).toContain("Agent connected");
    // Live again: no stale mark, Cancel enabled, the question's form back, the server line "Connected".
    await expect.poll(() => report.getByTestId("task-stale").count(), WAIT).toBe(0);
    expect(await report.getAttribute("class")).not.toContain("stale");
    expect(await report.getByTestId("cancel").isEnabled()).toBe(true);
    await question.waitFor(WAIT);
    expect(await page.getByTestId("connected").textContent()).toMatch(/^Connected to task-server 1\.0\.0/);
    // Same connection, same tasks, and the question still waits for its answer.
    expect(await page.getByTestId("connected").textContent()).toContain("task-server 1.0.0");
    expect(await statusOf(exportId)).toBe("completed");
    await expect.poll(() => statusOf(reportId), WAIT).toBe("input required");
    await question.getByLabel("Send it *").check();
    await question.getByRole("button", { name: "Send answer" }).click();
    await expect.poll(() => statusOf(reportId), WAIT).toBe("completed");
    expect(await card(reportId).getByTestId("task-result").textContent()).toBe("Sent 2 pages to grace@example.com.");

    // A reload after the restart: the same list, newest first.
    await page.reload();
    await expect.poll(() => page.locator('[data-testid="task-card"]').count(), WAIT).toBe(2);
    const ids = await page
      .locator('[data-testid="task-card"]')
      .evaluateAll((cards) => cards.map((c) => c.getAttribute("data-task-id")));
    expect(ids).toEqual([reportId, exportId]);
    await page.screenshot({ path: join(screenshots, "17-after-restart.png"), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
