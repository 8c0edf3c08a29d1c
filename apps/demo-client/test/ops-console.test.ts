// The operator console (durable-mcp-server/console, mounted by the demo Worker at /ops) in a real browser against the
// demo under `wrangler dev`, whose OPERATOR_TOKEN is set (test/setup.ts): the sign-in (a wrong token refused, the right
// one kept for the tab); the fleet table filtered by tag and status with counts, and paged; a task's run view with its
// step waterfall (a wait drawn apart from work); a real restart of an ended task from a step's row (the new task
// opened, audited); the buttons exactly as GET /operator lists actions (its list and a restart answer played by
// request routing as well: "Restart from here" on each step's row posts its label and opens the new task); the
// stuck list with a threshold given; the limits view with the demo's named limit and a slot a running task holds;
// cancel of the selected tasks and of every task a filter matches, each behind a confirmation that states the count; the audit log showing both. Every view is axe clean (serious and critical) in
// light and dark at 1280 and 375 px, runs under its strict CSP without a violation, and is screenshot to
// results/screenshots/ops-*.png (ignored by git).
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { McpHttpClient } from "@durable-mcp/test-harness";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, WAIT, type Browser } from "./browser.ts";

const { origin, chromium: executablePath, operatorToken } = inject("demo");
const shots = join(dirname(fileURLToPath(import.meta.url)), "../../../results/screenshots");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 375, height: 812 };
const mcp = new McpHttpClient(`${origin}/mcp`, { clientInfo: { name: "ops-console-test", version: "1.0.0" } });
const run = Math.random().toString(36).slice(2, 8);
/** Each group's tasks carry their own catalog tag (send_report tags the recipient's domain). */
const domain = (group: string) => `${group}${run}.example`;

let browser: Browser;
let page: Page;
const cspViolations: string[] = [];
const groupA: string[] = [];
const groupB: string[] = [];
let askingId = "";

/** A send_report task that renders 50 pages of 60 s each: working for the whole test. */
const long = (group: string) =>
  mcp.startTask("send_report", { to: `ops@${domain(group)}`, pages: 50, secondsPerPage: 60 }).then((t) => t.taskId);

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  browser = await launchBrowser(executablePath);
  page = browser.page;
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  await page.setViewportSize(WIDE);
  groupA.push(await long("a"), await long("a"), await long("a"));
  // More than a page (25) of them: the pager is tested on this group, then all cancelled by filter.
  for (let i = 0; i < 27; i++) groupB.push(await long("b"));
  // Two quick pages, then a question: input_required with done steps and a wait.
  askingId = (await mcp.startTask("send_report", { to: `ops@${domain("q")}`, pages: 2, secondsPerPage: 0 })).taskId;
  // expect.poll is for tests only: a plain wait here.
  const deadline = Date.now() + WAIT.timeout;
  while ((await mcp.getTask(askingId)).status !== "input_required") {
    if (Date.now() > deadline) throw new Error(`${askingId} never asked its question`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  await mcp.cancelTask(askingId).catch(() => undefined);
  await browser?.close();
});

/** axe-core on the current view in light and dark, at both widths, with a screenshot of each. */
async function inspect(name: string): Promise<string[]> {
  const found: string[] = [];
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const size of [WIDE, NARROW]) {
      await page.setViewportSize(size);
      await page.waitForTimeout(100);
      await page.screenshot({ path: join(shots, `ops-${name}-${scheme}-${size.width}.png`), fullPage: true });
      // Evaluated through the debugger, which the page's CSP does not govern (a <script> tag would be refused).
      if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
      const violations = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run: (c: Document, o: object) => Promise<AxeResults> } }).axe;
        const results = await axe.run(document, { resultTypes: ["violations"] });
        return results.violations
          .filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      });
      found.push(...violations.map((v) => `${name} ${scheme} ${size.width}px: ${v}`));
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize(WIDE);
  return found;
}
interface AxeResults {
  violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: string[] }> }>;
}

const rows = () => page.locator('[data-testid="fleet-table"] tbody tr[data-task]');
const rowIds = () => rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-task")));
/** Waits for a page of `count` rows, all of `group` (not the page shown before the filter's answer came). */
const expectPageOf = (group: string[], count: number) =>
  expect
    .poll(async () => {
      const ids = await rowIds();
      return ids.length === count && ids.every((id) => group.includes(id!));
    }, WAIT)
    .toBe(true);

async function filterFleet(fields: { tag?: string; status?: string }) {
  await page.goto(`${origin}/ops#/`);
  await page.getByLabel("Tag (key=value)", { exact: true }).fill(fields.tag ?? "");
  await page.getByLabel("Status", { exact: true }).selectOption(fields.status ?? "");
  await page.getByRole("button", { name: "Apply" }).click();
}

describe("the operator console at /ops", () => {
  it("is one page under a strict CSP that asks for the operator token, refuses a wrong one, keeps the right one", async () => {
    const response = await page.goto(`${origin}/ops`);
    expect(response?.status()).toBe(200);
    const csp = (await response?.headerValue("content-security-policy")) ?? "";
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[^']+'/);
    const tokenField = page.getByLabel("Token", { exact: true });
    await tokenField.fill("not-the-operator-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent(), WAIT).toContain("That token was refused");
    expect(await inspect("sign-in")).toEqual([]);
    await tokenField.fill(operatorToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.locator(".who").textContent(), WAIT).toContain("token");
    // Kept for the tab only: in sessionStorage, never in localStorage or a cookie.
    expect(await page.evaluate(() => Object.values(sessionStorage))).toEqual([operatorToken]);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await browser.context.cookies()).toEqual([]);
    await expect
      .poll(() => page.locator('[data-testid="counts"] tbody th').allTextContents(), WAIT)
      .toContain("send_report");
  });

  it("filters the fleet table by tag and status", async () => {
    await filterFleet({ tag: `domain=${domain("a")}` });
    await expect.poll(async () => (await rowIds()).toSorted(), WAIT).toEqual(groupA.toSorted());
    await filterFleet({ tag: `domain=${domain("q")}`, status: "input_required" });
    await expect.poll(rowIds, WAIT).toEqual([askingId]);
    await filterFleet({ tag: `domain=${domain("q")}`, status: "working" });
    await expect
      .poll(() => page.locator('[data-testid="fleet-table"] tbody').textContent(), WAIT)
      .toContain("No task matches");
    await filterFleet({ tag: `domain=${domain("a")}` });
    await expectPageOf(groupA, 3);
    expect(await inspect("fleet")).toEqual([]);
  });

  it("opens a task's run view: its state and duration, and the step waterfall with the wait apart from work", async () => {
    await filterFleet({ tag: `domain=${domain("q")}` });
    await page.getByRole("link", { name: askingId }).click();
    await expect.poll(() => page.getByTestId("run-header").textContent(), WAIT).toContain("input required");
    expect(await page.getByTestId("run-duration").textContent()).toMatch(/\d/);
    const steps = page.getByTestId("step-row");
    await expect.poll(() => steps.count(), WAIT).toBe(3);
    expect(await steps.evaluateAll((lis) => lis.map((li) => li.getAttribute("data-step")))).toEqual([
      "render page 1",
      "render page 2",
      "confirm send",
    ]);
    const wait = page.locator('[data-testid="step-row"][data-kind="input"] .wf-bar');
    expect(await wait.getAttribute("class")).toContain("bar-wait");
    const work = page.locator('[data-testid="step-row"][data-step="render page 1"] .wf-bar').first();
    expect(await work.getAttribute("class")).toContain("bar-work");
    // Details on demand: a step's attempts as timed.
    await page.getByRole("button", { name: /render page 1$/ }).click();
    await expect.poll(() => page.getByTestId("step-details").textContent(), WAIT).toContain("attempt 1:");
    // A live task: its header offers cancel (this server's one action); restart only ever on an ended task's rows.
    expect(await page.getByRole("button", { name: /^Restart from / }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Cancel", exact: true }).count()).toBe(1);
    expect(await inspect("run")).toEqual([]);
  });

  it("lists the stuck tasks with why, for a threshold the operator gives", async () => {
    await page.goto(`${origin}/ops#/stuck`);
    await page.getByLabel("Working with no progress for").fill("1s");
    await page.getByRole("button", { name: "Find" }).click();
    const table = page.getByTestId("stuck-table");
    await expect
      .poll(() => table.locator(`tr[data-task="${groupA[0]}"]`).textContent(), WAIT)
      .toContain("no step progress");
    expect(await inspect("stuck")).toEqual([]);
  });

  it("shows the fair-share limits per key: the demo's shared named limit, a running task's slot in use", async () => {
    // export_contacts names the shared "archive-uploads" limit (20): a long export holds one of its slots.
    const exporting = (
      await mcp.startTask("export_contacts", { bucket: "contacts-archive", batches: 20, secondsPerBatch: 60 })
    ).taskId;
    try {
      await page.goto(`${origin}/ops#/limits`);
      const row = page.getByTestId("limits-table").locator('tr[data-key="named:archive-uploads"]');
      // The view reads once when opened: reloaded until the run has taken its slot.
      await expect
        .poll(async () => {
          await page.reload();
          await row.waitFor({ timeout: 5_000 });
          const [key, limit, inUse, ...rest] = await row.locator("td").allTextContents();
          return { key, limit, inUse: Number(inUse) >= 1, cells: rest.length };
        }, WAIT)
        .toEqual({ key: "named:archive-uploads", limit: "20", inUse: true, cells: 5 });
      expect(await page.getByRole("link", { name: "Limits" }).getAttribute("aria-current")).toBe("page");
      expect(await inspect("limits")).toEqual([]);
    } finally {
      await mcp.cancelTask(exporting);
    }
  });

  it("cancels the selected tasks behind a confirmation that states how many", async () => {
    await filterFleet({ tag: `domain=${domain("a")}` });
    await expectPageOf(groupA, 3);
    await page.getByLabel("Select all on this page").check();
    await page.getByRole("button", { name: "Cancel selected" }).click();
    const dialog = page.getByRole("dialog");
    expect(await dialog.getByTestId("confirm-count").textContent()).toContain("cancel 3 of the 3 selected tasks");
    expect(await inspect("confirm")).toEqual([]);
    await dialog.getByRole("button", { name: "Cancel 3" }).click();
    await expect.poll(() => dialog.getByTestId("bulk-progress").textContent(), WAIT).toBe("Done: 3 of 3 done.");
    await dialog.getByRole("button", { name: "Close" }).click();
    await expect
      .poll(() => rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-status"))), WAIT)
      .toEqual(["cancelled", "cancelled", "cancelled"]);
  });

  it("restarts an ended task from a step's row as a new task, and opens it", async () => {
    const ended = groupA[1]!;
    await page.goto(`${origin}/ops#/tasks/${ended}`);
    await page.reload();
    await expect.poll(() => page.getByTestId("run-header").textContent(), WAIT).toContain("cancelled");
    await page.getByRole("button", { name: "Restart from render page 1" }).click();
    const dialog = page.getByRole("dialog");
    expect(await dialog.getByTestId("confirm-count").textContent()).toContain("creates 1 new task");
    await dialog.getByRole("button", { name: "Restart as a new task" }).click();
    await expect.poll(() => page.evaluate(() => location.hash), WAIT).not.toBe(`#/tasks/${ended}`);
    const restarted = decodeURIComponent((await page.evaluate(() => location.hash)).slice("#/tasks/".length));
    await expect.poll(() => page.getByTestId("run-header").textContent(), WAIT).toContain("working");
    expect((await mcp.getTask(restarted)).status).toBe("working");
    await mcp.cancelTask(restarted);
  });

  it("offers exactly the actions GET /operator lists: restart from a step's row, pause, resume, retry", async () => {
    // A server that answers more actions than this one (the console needs no change for them): its GET /operator
    // and its restart answer are played by the browser's request routing.
    await page.route(`${origin}/operator`, async (route) => {
      const real = await route.fetch();
      const body = { ...(await real.json()), actions: ["cancel", "pause", "resume", "retry", "restart"] };
      await route.fulfill({ response: real, json: body });
    });
    const restarts: unknown[] = [];
    // groupA[0] was cancelled by the test before: an ended task, which retry and restart apply to.
    const ended = groupA[0]!;
    await page.route(`${origin}/operator/tasks/${ended}/restart`, async (route) => {
      restarts.push(route.request().postDataJSON());
      await route.fulfill({
        json: { taskId: ended, status: "working", newTaskId: askingId, fromStep: "render page 1" },
      });
    });
    try {
      // A load, not a hash change: the console reads GET /operator when it starts.
      await page.goto(`${origin}/ops#/tasks/${ended}`);
      await page.reload();
      await expect.poll(() => page.getByTestId("step-row").count(), WAIT).toBe(1);
      expect(await page.getByTestId("run-header").getByRole("button").allTextContents()).toEqual(["Retry"]);
      await page.getByRole("button", { name: "Restart from render page 1" }).click();
      const dialog = page.getByRole("dialog");
      expect(await dialog.getByTestId("confirm-count").textContent()).toContain("creates 1 new task");
      await dialog.getByRole("button", { name: "Restart as a new task" }).click();
      await expect.poll(() => page.evaluate(() => location.hash), WAIT).toBe(`#/tasks/${askingId}`);
      expect(restarts).toEqual([{ fromStep: "render page 1" }]);
      // A live task: cancel, pause and resume; no restart on its rows until it ends.
      await expect.poll(() => page.getByTestId("step-row").count(), WAIT).toBe(3);
      expect(await page.getByTestId("run-header").getByRole("button").allTextContents()).toEqual([
        "Cancel",
        "Pause",
        "Resume",
      ]);
      expect(await page.getByRole("button", { name: /^Restart from / }).count()).toBe(0);
      await page.goto(`${origin}/ops#/`);
      await expect
        .poll(() => page.getByTestId("bulk-actions").getByRole("button").allTextContents(), WAIT)
        .toEqual(["Cancel selected", "Pause selected", "Resume selected", "Retry selected", "Cancel all matching…"]);
    } finally {
      await page.unrouteAll();
    }
  });

  it("pages through the fleet table", async () => {
    await filterFleet({ tag: `domain=${domain("b")}` });
    await expectPageOf(groupB, 25);
    const first = await rowIds();
    await page.getByRole("button", { name: "Next page" }).click();
    await expect.poll(rowIds, WAIT).toHaveLength(2);
    expect([...first, ...(await rowIds())].toSorted()).toEqual(groupB.toSorted());
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Previous page" }).click();
    await expect.poll(rowIds, WAIT).toEqual(first);
  });

  it("cancels every live task a filter matches, confirming the dry run's count, and follows the job", async () => {
    await filterFleet({ tag: `domain=${domain("b")}` });
    await expectPageOf(groupB, 25);
    await page.getByRole("button", { name: "Cancel all matching…" }).click();
    const dialog = page.getByRole("dialog");
    await expect.poll(() => dialog.getByTestId("confirm-count").textContent(), WAIT).toContain("27 live tasks match");
    await dialog.getByRole("button", { name: "Cancel 27" }).click();
    await expect.poll(() => dialog.getByTestId("bulk-progress").textContent(), WAIT).toBe("Done: 27 of 27 done.");
    await dialog.getByRole("button", { name: "Close" }).click();
    for (const taskId of groupB) {
      await expect.poll(async () => (await mcp.getTask(taskId)).status, WAIT).toBe("cancelled");
    }
  });

  it("shows both actions in the audit log, and the charts per tool once tasks finished", async () => {
    await page.goto(`${origin}/ops#/audit`);
    const audit = page.getByTestId("audit-table");
    await expect.poll(() => audit.locator('tr[data-action="cancel"]').count(), WAIT).toBeGreaterThanOrEqual(3);
    expect(await audit.locator('tr[data-action="bulk_cancel_started"]').first().textContent()).toContain(domain("b"));
    expect(await audit.locator('tr[data-action="restart"]').first().textContent()).toContain(groupA[1]!);
    expect(await inspect("audit")).toEqual([]);
    await page.goto(`${origin}/ops#/`);
    await page.reload();
    const charts = page.locator('[data-testid="charts"] [data-tool="send_report"] canvas');
    await expect.poll(() => charts.count(), WAIT).toBe(3);
    expect(await inspect("charts")).toEqual([]);
    expect(cspViolations).toEqual([]);
    expect(browser.pageErrors).toEqual([]);
  });
});
