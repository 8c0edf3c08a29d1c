// The page people look at (issue 17), in a real browser: it connects by itself; a chosen tool's form opens in view
// with focus; a task whose tool answered isError is shown as failed (a tool error), and one that ended `failed` (the
// handler's TaskProtocolError) as failed (a protocol failure); the run view draws one row per step with a bar per
// attempt and the back-off between them, and details on click; the JSON-RPC log starts collapsed; axe-core finds no
// serious or critical violation on home, a task and the run view, light and dark, at 1280 and 375 px. Screenshots
// at 1280×800 and 375×812 go to results/screenshots/ (ignored by git).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, WAIT, type Browser } from "./browser.ts";

const { origin, chromium: executablePath } = inject("demo");
const shots = join(dirname(fileURLToPath(import.meta.url)), "../../../results/screenshots");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 375, height: 812 };

let browser: Browser;
let page: Page;
let dir = "";

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "run-view-"));
  browser = await launchBrowser(executablePath);
  page = browser.page;
  await page.setViewportSize(WIDE);
});

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

const card = (taskId: string): Locator => page.locator(`[data-testid="task-card"][data-task-id="${taskId}"]`);

/** Both widths, for the screenshots of one state: `<name>-1280.png` and `<name>-375.png`. */
async function screenshotBoth(name: string) {
  for (const size of [WIDE, NARROW]) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(shots, `${name}-${size.width}.png`) });
  }
  await page.setViewportSize(WIDE);
}

/** axe-core on the current page in light and dark, at both widths: the serious and critical violations. */
async function axeViolations(): Promise<string[]> {
  const found: string[] = [];
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const size of [WIDE, NARROW]) {
      await page.setViewportSize(size);
      if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: axeSource });
      const violations = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<AxeResults> } }).axe;
        const results = await axe.run(document, { resultTypes: ["violations"] });
        return results.violations
          .filter((v) => v.impact === "serious" || v.impact === "critical")
          .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
      });
      found.push(...violations.map((v) => `${scheme} ${size.width}px: ${v}`));
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize(WIDE);
  return found;
}
interface AxeResults {
  violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: string[] }> }>;
}

async function startedTaskId(before: number): Promise<string> {
  await expect.poll(() => page.locator('[data-testid="task-card"]').count(), WAIT).toBe(before + 1);
  return (await page.locator('[data-testid="task-card"]').first().getAttribute("data-task-id")) ?? "";
}

describe("the run view and the page people look at", () => {
  let reportId = "";

  it("connects to its own server by itself and lists task tools first, file plumbing as advanced", async () => {
    await page.goto(`${origin}/`);
    // No Connect press: the page's agent connects to the page's own (open, loopback) server.
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");
    const taskTools = page.locator(".tools").first().locator("[data-testid^=tool-]");
    expect(await taskTools.evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")))).toEqual([
      "tool-send_report",
      "tool-await_approval",
      "tool-export_contacts",
      "tool-dataset_report",
      "tool-fan_out",
    ]);
    expect(await page.getByTestId("tool-send_report").textContent()).toContain("Send a report");
    expect(await page.getByTestId("tool-await_approval").textContent()).toContain("Wait for an approval");
    // File plumbing is grouped under a closed "Advanced" disclosure.
    const advanced = page.locator("details.advanced");
    expect(await advanced.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
    expect(await advanced.locator("[data-testid=tool-file_upload_url]").count()).toBe(1);
    expect(await axeViolations()).toEqual([]);
    await screenshotBoth("home");
  });

  it("opens a chosen tool's form in view with its first field focused, labels and hints from the schema", async () => {
    await page.setViewportSize(WIDE);
    await page.getByTestId("tool-export_contacts").click();
    const form = page.getByTestId("tool-form");
    await form.waitFor(WAIT);
    await expect.poll(() => form.evaluate((el) => el.getBoundingClientRect().top), WAIT).toBeLessThan(WIDE.height);
    expect(await form.evaluate((el) => el.getBoundingClientRect().top)).toBeGreaterThanOrEqual(0);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("arg-bucket");
    expect(await page.locator('label[for="arg-bucket"]').textContent()).toBe("Archive bucket *");
    expect(await page.locator('label[for="arg-secondsPerBatch"]').textContent()).toBe("Time per batch (seconds)");
    // The valid buckets are offered (not enforced: a wrong one shows the server's repairable error).
    expect(
      await page.locator("#arg-bucket-examples option").evaluateAll((els) => els.map((el) => el.getAttribute("value"))),
    ).toEqual(["contacts-archive", "contacts-archive-eu"]);
  });

  it("shows a task whose tool answered isError as failed, a tool error, not completed", async () => {
    await page.getByTestId("tool-send_report").click();
    const before = await page.locator('[data-testid="task-card"]').count();
    await page.fill("#arg-to", "nobody@invalid.example");
    await page.fill("#arg-pages", "1");
    await page.fill("#arg-secondsPerPage", "0");
    await page.getByRole("button", { name: "Start task" }).click();
    const taskId = await startedTaskId(before);
    const task = card(taskId);
    const question = task.getByTestId("question");
    await question.waitFor(WAIT);
    await question.getByLabel("Send it *").check();
    await question.getByRole("button", { name: "Send answer" }).click();
    await expect.poll(() => task.getAttribute("data-state"), WAIT).toBe("failed");
    expect(await task.getByTestId("task-status").textContent()).toBe("failed");
    expect(await task.getByTestId("task-failure").textContent()).toMatch(/^tool error/);
    expect(await task.getByTestId("task-result").textContent()).toContain("does not exist");
    expect(await task.getByTestId("task-duration").textContent()).toMatch(/^took \d/);
    // No live progress on a final task, and its action says what it does.
    expect(await task.getByTestId("task-progress").count()).toBe(0);
    expect(await task.textContent()).toContain("Forgets it on this page");
    await task.scrollIntoViewIfNeeded();
    await screenshotBoth("failed-task");
  });

  it("shows a task that ended failed (the handler's TaskProtocolError) as failed, a protocol failure", async () => {
    await page.getByTestId("tool-send_report").click();
    const before = await page.locator('[data-testid="task-card"]').count();
    // The demo's mail service refuses jobs for refused.example: the task ends `failed` with JSON-RPC error -32603.
    await page.fill("#arg-to", "ops@refused.example");
    await page.fill("#arg-pages", "1");
    await page.fill("#arg-secondsPerPage", "0");
    await page.getByRole("button", { name: "Start task" }).click();
    const taskId = await startedTaskId(before);
    const task = card(taskId);
    const question = task.getByTestId("question");
    await question.waitFor(WAIT);
    await question.getByLabel("Send it *").check();
    await question.getByRole("button", { name: "Send answer" }).click();
    await expect.poll(() => task.getAttribute("data-state"), WAIT).toBe("failed");
    expect(await task.getByTestId("task-status").textContent()).toBe("failed");
    expect(await task.getByTestId("task-failure").textContent()).toBe(
      "protocol failure: the task failed (JSON-RPC error -32603)",
    );
    expect(await task.getByTestId("task-result").textContent()).toBe(
      "The task failed: the mail service refused the job for ops@refused.example",
    );
    expect(await task.getByTestId("task-duration").textContent()).toMatch(/^took \d/);
    expect(await task.getByTestId("task-progress").count()).toBe(0);
    await task.scrollIntoViewIfNeeded();
    expect(await axeViolations()).toEqual([]);
    await screenshotBoth("protocol-failure");
  });

  it("follows a running task and its question; the card shows retries once the task retried", async () => {
    const csv = join(dir, "weather.csv");
    const rows = ["id,temperature"];
    for (let i = 1; i <= 200; i++) rows.push(`${i},${(10 + (i % 17) * 1.5).toFixed(1)}`);
    writeFileSync(csv, `${rows.join("\n")}\n`);
    await page.setInputFiles("#upload-input", csv);
    await expect
      .poll(() => page.locator('[data-upload-name="weather.csv"]').getByTestId("upload-state").textContent(), WAIT)
      .toBe("ready");
    await page.getByTestId("tool-dataset_report").click();
    await page.fill("#arg-title", "Weather");
    await page.fill("#arg-flakyAttempts", "1");
    await page.fill("#arg-pauseSeconds", "1");
    const before = await page.locator('[data-testid="task-card"]').count();
    await page.getByRole("button", { name: "Start task" }).click();
    reportId = await startedTaskId(before);
    const task = card(reportId);
    await task.scrollIntoViewIfNeeded();
    await screenshotBoth("running-task");
    const question = task.getByTestId("question");
    await question.waitFor(WAIT);
    await question.scrollIntoViewIfNeeded();
    expect(await axeViolations()).toEqual([]);
    await screenshotBoth("question");
    await question.getByLabel("Column *").selectOption("temperature");
    await question.getByRole("button", { name: "Send answer" }).click();
    await expect.poll(() => task.getAttribute("data-state"), WAIT).toBe("completed");
    expect(await task.getByTestId("task-retries").textContent()).toBe("compute statistics retried once");
  });

  it("draws the run view: one row per step, a bar per attempt with the back-off, details on click, log collapsed", async () => {
    await card(reportId)
      .getByRole("link", { name: /Run view/ })
      .click();
    await page.waitForURL(`${origin}/task/${reportId}`);
    const waterfall = page.getByTestId("waterfall");
    await waterfall.waitFor(WAIT);
    const rows = waterfall.getByTestId("step-row");
    await expect
      .poll(() =>
        rows.evaluateAll((els) => els.map((el) => `${el.getAttribute("data-kind")}:${el.getAttribute("data-step")}`)),
      )
      .toEqual(["do:profile", "input:choose column", "do:compute statistics", "sleep:rate limit pause", "do:render"]);
    // Every row has its bar; the retried step one per attempt, as timed by the server, and the back-off between.
    for (const row of await rows.all())
      expect(await row.getByTestId("step-bar").locator(".wf-bar").count()).toBeGreaterThan(0);
    const stats = waterfall.locator('[data-step="compute statistics"]');
    expect(await stats.getAttribute("data-attempts")).toBe("2");
    expect(await stats.getByTestId("attempt-bar").count()).toBe(2);
    expect(await stats.getByTestId("backoff-bar").count()).toBe(1);
    const [first, gap, second] = await Promise.all(
      ['[data-n="1"]', '[data-testid="backoff-bar"]', '[data-n="2"]'].map((sel) =>
        stats.locator(sel).evaluate((el) => el.getBoundingClientRect()),
      ),
    );
    // Attempt 1, then the back-off (500 ms), then attempt 2, left to right on the shared axis.
    expect(gap!.left).toBeGreaterThanOrEqual(first!.left);
    expect(second!.left).toBeGreaterThanOrEqual(gap!.left + gap!.width - 1);
    expect(await waterfall.locator('[data-step="rate limit pause"] .bar-sleep').count()).toBe(1);
    expect(await waterfall.locator('[data-step="choose column"] .bar-input').count()).toBe(1);

    await stats.getByRole("button").click();
    const details = page.getByTestId("step-details");
    await details.waitFor(WAIT);
    const attempts = details.getByTestId("step-attempts").locator("tbody tr");
    expect(await attempts.count()).toBe(2);
    expect(await attempts.first().textContent()).toContain("statistics service timed out (attempt 1)");
    expect(await details.getByTestId("step-result-size").textContent()).toMatch(/^\d+(\.\d+)? (B|KiB|MiB)$/);

    // The JSON-RPC log starts collapsed.
    const log = page.getByTestId("rpc-log-section");
    expect(await log.evaluate((el) => (el as HTMLDetailsElement).open)).toBe(false);
    expect(await axeViolations()).toEqual([]);
    await screenshotBoth("run-view");
    expect(browser.pageErrors).toEqual([]);
  });
});
