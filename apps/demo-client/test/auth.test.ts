// The page on a server that requires a bearer token (issue 17: "asks for a token when the server requires one"), in
// a real browser. A second `wrangler dev` of the demo, started here with AUTH_TOKENS and otherwise the same arguments
// as the setup's (the same built page, secrets and WATCHER_SERVERS): the page's own connection is refused with 401,
// the page shows the token field, focused; a wrong token is refused again, the right one connects, and the agent's
// later calls (a task started and followed to its end, a reload) go on with the token it keeps.
import { join } from "node:path";
import { WranglerDev } from "@durable-mcp/test-harness";
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, screenshots, WAIT, type Browser } from "./browser.ts";

const { chromium: executablePath, server: demo } = inject("demo");
const TOKEN = "page-test-token";

// Its own port: DEMO_CLIENT_AUTH_PORT, else the one after the setup's server (inspector at port + 1000, as there).
const server = WranglerDev.create({
  name: "demo-client-auth",
  cwd: demo.cwd,
  config: demo.config ?? undefined,
  port: Number(process.env.DEMO_CLIENT_AUTH_PORT ?? demo.port + 1),
  portHint: "set DEMO_CLIENT_AUTH_PORT",
  readyHeaders: { Authorization: `Bearer ${TOKEN}` },
  args: [...demo.args, "--var", `AUTH_TOKENS:${TOKEN}:alice`],
});
const origin = server.origin;

let browser: Browser;
let page: Page;

beforeAll(async () => {
  await server.start();
  browser = await launchBrowser(executablePath);
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await server.dispose();
});

const card = (taskId: string): Locator => page.locator(`[data-testid="task-card"][data-task-id="${taskId}"]`);

describe("a server that requires a bearer token", () => {
  it("asks for the token on the page's own server's 401, refuses a wrong one and connects with the right one", async () => {
    await page.goto(`${origin}/`);
    // The page connects by itself; the server answers 401, and the page says so and asks for the token.
    const problem = page.getByTestId("connect-error");
    await problem.waitFor(WAIT);
    expect(await problem.textContent()).toContain("needs a bearer token");
    const field = page.locator("#server-token");
    expect(await field.isVisible()).toBe(true);
    expect(await page.locator('label[for="server-token"]').textContent()).toBe(
      "Bearer token (this server requires one)",
    );
    await expect.poll(() => page.evaluate(() => document.activeElement?.id), WAIT).toBe("server-token");
    expect(await page.getByTestId("connected").count()).toBe(0);
    await page.screenshot({ path: join(screenshots, "20-token-required.png"), fullPage: true });

    // A wrong token: refused again, still asking. The first refusal's message says the same, so wait for it to go
    // (the agent is connecting again) before reading the answer to this connect.
    const firstRefusal = await problem.elementHandle();
    await field.fill("not-the-token");
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await firstRefusal!.waitForElementState("hidden", WAIT);
    await expect.poll(() => page.getByTestId("connect-error").textContent(), WAIT).toContain("HTTP 401");
    expect(await page.getByTestId("connected").count()).toBe(0);

    await page.locator("#server-token").fill(TOKEN);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");
    expect(await page.getByTestId("connect-error").count()).toBe(0);
    // The agent keeps the token (never the page): the field is emptied and says so.
    expect(await page.locator("#server-token").inputValue()).toBe("");
    expect(await page.locator("#server-token").getAttribute("placeholder")).toBe("kept by the agent for this URL");
  });

  it("starts and follows a task with the kept token, and stays connected after a reload", async () => {
    await page.getByTestId("tool-export_contacts").click();
    await page.fill("#arg-bucket", "contacts-archive");
    await page.fill("#arg-batches", "1");
    await page.fill("#arg-secondsPerBatch", "0");
    await page.getByRole("button", { name: "Start task" }).click();
    await expect.poll(() => page.locator('[data-testid="task-card"]').count(), WAIT).toBe(1);
    const taskId = (await page.locator('[data-testid="task-card"]').first().getAttribute("data-task-id")) ?? "";
    await expect.poll(() => card(taskId).getAttribute("data-state"), WAIT).toBe("completed");
    expect(await card(taskId).getByTestId("task-result").textContent()).toBe(
      "Exported 100 contacts to contacts-archive/contacts.csv.",
    );

    await page.reload();
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");
    expect(await page.getByTestId("connect-error").count()).toBe(0);
    await expect.poll(() => card(taskId).getAttribute("data-state"), WAIT).toBe("completed");
    await page.screenshot({ path: join(screenshots, "21-token-connected.png"), fullPage: true });
    expect(browser.pageErrors).toEqual([]);
  });
});
