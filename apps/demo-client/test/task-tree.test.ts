// The task tree on the task page (issue 31), in a real browser against the demo Worker: `fan_out` invokes three
// `export_contacts` children; its page lists them (tool, invoke step, status as the parent's timeline reports it,
// each a link) and draws each invoke step as a "child task" bar with a link to the child; a child's page links back
// to its parent; the children stay off the home list (they are on their parent's page). axe-core finds no serious
// or critical violation on the tree, light and dark, at 1280 and 375 px, and nothing overflows at 375 px.
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, WAIT, type Browser } from "./browser.ts";

const { origin, chromium: executablePath } = inject("demo");
const shots = join(dirname(fileURLToPath(import.meta.url)), "../../../results/screenshots");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const WIDE = { width: 1280, height: 800 };
const NARROW = { width: 375, height: 812 };

let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  browser = await launchBrowser(executablePath);
  page = browser.page;
  await page.setViewportSize(WIDE);
});

afterAll(async () => {
  await browser?.close();
});

/** Screenshots of one state at both widths (results/screenshots/, ignored by git): `<name>-1280.png`, `-375.png`. */
async function screenshotBoth(name: string) {
  for (const size of [WIDE, NARROW]) {
    await page.setViewportSize(size);
    await page.screenshot({ path: join(shots, `${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(WIDE);
}

interface AxeResults {
  violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: string[] }> }>;
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

const children = () => page.getByTestId("tree-child");
const statuses = () => children().evaluateAll((els) => els.map((el) => el.getAttribute("data-status")));

describe("the task tree", () => {
  let parentId = "";
  let childId = "";

  it("starts fan_out and lists its three children on its page, with their states as the timeline reports them", async () => {
    await page.goto(`${origin}/`);
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");
    const cards = page.locator('[data-testid="task-card"]');
    const before = await cards.count();
    await page.getByTestId("tool-fan_out").click();
    await page.fill("#arg-secondsPerBatch", "1");
    await page.getByRole("button", { name: "Start task" }).click();
    await expect.poll(() => cards.count(), WAIT).toBe(before + 1);
    parentId = (await cards.first().getAttribute("data-task-id")) ?? "";
    expect(parentId).not.toBe("");

    await cards
      .first()
      .getByRole("link", { name: /Run view/ })
      .click();
    await expect.poll(() => page.url(), WAIT).toBe(`${origin}/task/${parentId}`);
    const tree = page.getByTestId("task-tree");
    await expect.poll(() => children().count(), WAIT).toBe(3);
    expect(await tree.getByRole("heading", { name: "Task tree" }).count()).toBe(1);
    expect(await page.getByTestId("tree-parent").count()).toBe(0);
    // While the parent waits, a child the parent has not heard from yet is `working`; each ends `completed`.
    const seen = new Set<string | null>(await statuses());
    for (const status of seen) expect(["working", "completed"]).toContain(status);
    await expect
      .poll(
        async () => {
          for (const status of await statuses()) seen.add(status);
          return await statuses();
        },
        { timeout: 60_000 },
      )
      .toEqual(["completed", "completed", "completed"]);
    expect(seen.has("working")).toBe(true);
    const items = await children().evaluateAll((els) => els.map((el) => el.textContent ?? ""));
    expect(items).toEqual([
      expect.stringMatching(/^export_contacts step “export 1” completed$/),
      expect.stringMatching(/^export_contacts step “export 2” completed$/),
      expect.stringMatching(/^export_contacts step “export 3” completed$/),
    ]);
    expect(await children().getByTestId("tree-child-status").first().textContent()).toBe("completed");
    await expect.poll(() => page.getByTestId("task-card").getAttribute("data-state"), WAIT).toBe("completed");
    childId = (await children().first().getAttribute("data-task-id")) ?? "";
    expect(childId).toMatch(/\S/);
    expect(childId).not.toBe(parentId);
  });

  it("draws each invoke step as a child-task bar with a link to the child", async () => {
    const rows = page.locator('[data-testid="step-row"][data-kind="invoke"]');
    expect(await rows.count()).toBe(3);
    expect(await rows.first().locator(".kind-tag").textContent()).toBe("child task");
    expect(await rows.first().locator(".wf-bar.bar-invoke").count()).toBe(1);
    const link = rows.first().getByTestId("step-child").getByRole("link");
    expect(await link.textContent()).toBe("export_contacts");
    expect(await link.getAttribute("href")).toBe(`/task/${encodeURIComponent(childId)}`);
    expect(await axeViolations()).toEqual([]);
    await page.setViewportSize(NARROW);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(NARROW.width);
    expect(await page.getByTestId("task-tree").isVisible()).toBe(true);
    await page.setViewportSize(WIDE);
    await screenshotBoth("task-tree-parent");
  });

  it("follows a child's link to its page, which links back to its parent", async () => {
    await children().first().getByRole("link", { name: "export_contacts" }).click();
    await expect.poll(() => page.url(), WAIT).toBe(`${origin}/task/${childId}`);
    const card = page.getByTestId("task-card");
    await expect.poll(() => card.getAttribute("data-task-id"), WAIT).toBe(childId);
    expect(await card.locator(".task-tool").textContent()).toBe("export_contacts");
    await expect.poll(() => card.getAttribute("data-state"), WAIT).toBe("completed");
    const parent = page.getByTestId("tree-parent");
    await parent.waitFor(WAIT);
    expect(await parent.getByRole("link").first().textContent()).toBe("fan_out");
    expect(await parent.textContent()).toContain("export 1");
    expect(await page.getByTestId("tree-self").getAttribute("aria-current")).toBe("page");
    // The child's own steps are its batches: no children of its own.
    expect(await children().count()).toBe(0);
    expect(await axeViolations()).toEqual([]);
    await screenshotBoth("task-tree-child");

    await parent.getByRole("link", { name: "fan_out" }).click();
    await expect.poll(() => page.url(), WAIT).toBe(`${origin}/task/${parentId}`);
    await expect.poll(() => children().count(), WAIT).toBe(3);
  });

  it("keeps the children off the home list: they are on their parent's page", async () => {
    await page.getByRole("link", { name: "← all tasks" }).click();
    const cards = page.locator('[data-testid="task-card"]');
    await expect.poll(() => cards.count(), WAIT).toBeGreaterThan(0);
    const ids = await cards.evaluateAll((els) => els.map((el) => el.getAttribute("data-task-id")));
    expect(ids).toContain(parentId);
    expect(ids).not.toContain(childId);
    expect(browser.pageErrors).toEqual([]);
  });
});
