// The browser the page tests drive: Debian chromium through playwright-core, headless, on a fresh profile (its own
// --user-data-dir) per test file, so no state from an earlier run or another file leaks in.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** Where the tests' screenshots go (ignored by git). */
export const screenshots = join(dirname(fileURLToPath(import.meta.url)), "../screenshots");
export const WAIT = { timeout: 30_000 };

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page: a test ends by expecting none. */
  pageErrors: string[];
  close(): Promise<void>;
}

export async function launchBrowser(executablePath: string): Promise<Browser> {
  mkdirSync(screenshots, { recursive: true });
  const userDataDir = mkdtempSync(join(tmpdir(), "demo-client-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    headless: true,
    viewport: { width: 1100, height: 1000 },
    acceptDownloads: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  return {
    context,
    page,
    pageErrors,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
