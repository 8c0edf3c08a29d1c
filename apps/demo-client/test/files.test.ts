// Files in the task page, in a real browser against the task server under `wrangler dev`: a CSV uploaded (sha256
// computed in the page, tus to the signed URL, verified by the server), dataset_report started on it and answered
// through the generated form, the SVG it wrote downloaded and verified both in the page and here; a tampered
// download and a tampered upload refused with the server's words and a next step; an upload a reload interrupted,
// resumed from the server's offset; an upload whose handle the server no longer knows.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpHttpClient, type JsonObject } from "@durable-mcp/test-harness";
import type { Locator, Page, Request, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { launchBrowser, screenshots, WAIT, type Browser } from "./browser.ts";

const { origin, chromium: executablePath } = inject("demo");
const mcp = new McpHttpClient(`${origin}/mcp`, { clientInfo: { name: "demo-client-test", version: "1.0.0" } });
/** The page's tus chunk (src/files.ts CHUNK_BYTES). */
const CHUNK = 1024 * 1024;

let browser: Browser;
let page: Page;
let pageErrors: string[];
let dir: string;

beforeAll(async () => {
  browser = await launchBrowser(executablePath);
  ({ page, pageErrors } = browser);
  dir = mkdtempSync(join(tmpdir(), "demo-client-files-"));
});

afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sha256Hex = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

/** A CSV of `rows` rows: an id, a text column and two numeric ones (the e2e suite's sample). */
function sampleCsv(rows: number): string {
  const lines = ["id,city,temperature,rainfall"];
  for (let i = 1; i <= rows; i++) {
    lines.push(`${i},"City ${i % 7}, North",${((i * 37) % 40) - 5}.5,${(i * 13) % 90}`);
  }
  return `${lines.join("\n")}\n`;
}

function writeCsv(name: string, csv: string): { path: string; bytes: Buffer; sha256: string } {
  const path = join(dir, name);
  writeFileSync(path, csv);
  const bytes = readFileSync(path);
  return { path, bytes, sha256: sha256Hex(bytes) };
}

const upload = (name: string): Locator => page.locator(`[data-testid="upload"][data-upload-name="${name}"]`);
const uploadState = (name: string) => upload(name).getByTestId("upload-state").textContent();
const card = (taskId: string): Locator => page.locator(`[data-testid="task-card"][data-task-id="${taskId}"]`);
const filesRoute = (url: URL) => url.pathname.startsWith("/files/");
/** A signed file URL (downloads and tus uploads), not the tus creation endpoint. */
const isDownload = (url: URL) => filesRoute(url) && url.searchParams.has("sig");
const isFilePatch = (request: Request) =>
  request.method() === "PATCH" && new URL(request.url()).pathname.startsWith("/files/");

async function toolResult(name: string, args: JsonObject) {
  return (await mcp.call("tools/call", { name, arguments: args })) as {
    content: Array<Record<string, any>>;
    structuredContent: Record<string, any>;
    isError?: boolean;
  };
}

describe("files in the task page", () => {
  let weather: ReturnType<typeof writeCsv>;
  let handle = "";

  it("uploads a CSV: sha256 computed in the page, sent with tus, verified by the server", async () => {
    await page.goto(`${origin}/`);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await expect.poll(() => page.getByTestId("connected").textContent(), WAIT).toContain("task-server 1.0.0");
    await page.getByTestId("files-panel").waitFor(WAIT);
    expect(await page.getByTestId("upload").count()).toBe(0);

    weather = writeCsv("weather.csv", sampleCsv(500));
    await page.setInputFiles("#upload-input", weather.path);
    await expect.poll(() => uploadState("weather.csv"), WAIT).toBe("ready");
    handle = (await upload("weather.csv").getByTestId("upload-handle").textContent()) ?? "";
    expect(handle).toMatch(/^file_[A-Za-z0-9_-]+$/);
    expect(await upload("weather.csv").getByTestId("upload-size").textContent()).toBe(`${weather.bytes.length} bytes`);
    expect(await upload("weather.csv").getByTestId("upload-sha256").textContent()).toBe(weather.sha256);
    expect(await upload("weather.csv").textContent()).toContain("verified by the server");

    // The server has the file, with the digest the page computed.
    const status = await toolResult("file_status", { handle });
    expect(status.structuredContent).toMatchObject({
      handle,
      name: "weather.csv",
      state: "ready",
      size: weather.bytes.length,
      sha256: weather.sha256,
    });
    await page.screenshot({ path: join(screenshots, "7-uploaded.png"), fullPage: true });
  });

  it("runs dataset_report on the upload, answers its question, and downloads the chart with a verified sha256", async () => {
    await page.getByTestId("tool-dataset_report").click();
    // The file field is filled with the newest upload, which the form names.
    expect(await page.locator("#arg-file").inputValue()).toBe(handle);
    expect(await page.getByTestId("arg-file-chosen").textContent()).toContain("weather.csv");
    await page.fill("#arg-title", "Weather");
    await page.fill("#arg-pauseSeconds", "1");
    await page.getByRole("button", { name: "Start task" }).click();
    await expect.poll(() => page.locator('[data-testid="task-card"]').count(), WAIT).toBe(1);
    const taskId = (await page.locator('[data-testid="task-card"]').first().getAttribute("data-task-id")) ?? "";
    const task = card(taskId);

    // The question's form comes from its requestedSchema: the numeric columns, and svg or markdown.
    const question = task.getByTestId("question");
    await question.waitFor(WAIT);
    expect(await question.textContent()).toContain("weather.csv: 500 rows");
    const column = question.getByLabel("Column *");
    expect(await column.locator("option").allTextContents()).toEqual(["—", "id", "temperature", "rainfall"]);
    await column.selectOption("temperature");
    expect(await question.getByLabel("Format *").inputValue()).toBe("svg");
    await question.getByLabel("Format *").selectOption("svg");
    await page.screenshot({ path: join(screenshots, "8-dataset-question.png"), fullPage: true });
    await question.getByRole("button", { name: "Send answer" }).click();

    await expect.poll(() => task.getByTestId("task-status").textContent(), WAIT).toBe("completed");
    expect(await task.getByTestId("task-result").textContent()).toContain("Weather: temperature over 500 rows");

    // What the task reported, read here on its own.
    const done = await mcp.getTask(taskId);
    const result = done.result as { content: Array<Record<string, any>>; structuredContent: Record<string, any> };
    const artifact = result.structuredContent.artifact as {
      handle: string;
      name: string;
      size: number;
      sha256: string;
    };
    expect(artifact).toMatchObject({ name: "weather.svg", mimeType: "image/svg+xml" });
    expect(result.content.find((block) => block.type === "resource_link")).toMatchObject({
      name: "weather.svg",
      _meta: { "durable-mcp-server/file": { handle: artifact.handle, sha256: artifact.sha256 } },
    });

    const file = task.getByTestId("file-link");
    expect(await file.count()).toBe(1);
    expect(await file.getAttribute("data-handle")).toBe(artifact.handle);
    expect(await file.getByTestId("file-name").textContent()).toBe("weather.svg");
    expect(await file.getByTestId("file-sha256").textContent()).toBe(artifact.sha256);
    expect(await file.getByTestId("file-size").textContent()).toContain(`${artifact.size} bytes`);

    // The page saves the file once it has checked it; the saved bytes hash to the sha256 the task reported.
    const [saved] = await Promise.all([page.waitForEvent("download", WAIT), file.getByTestId("download").click()]);
    expect(saved.suggestedFilename()).toBe("weather.svg");
    const path = join(dir, "downloaded.svg");
    await saved.saveAs(path);
    const bytes = readFileSync(path);
    expect(bytes.length).toBe(artifact.size);
    expect(sha256Hex(bytes)).toBe(artifact.sha256);
    expect(bytes.toString("utf8")).toMatch(/^<svg [^>]*>.*Weather: temperature/s);
    const verified = file.getByTestId("download-verified");
    await verified.waitFor(WAIT);
    expect(await verified.textContent()).toContain(`sha256 verified (${artifact.size} bytes, ${artifact.sha256})`);
    const preview = file.getByTestId("download-preview");
    await expect.poll(() => preview.evaluate((img) => (img as HTMLImageElement).naturalWidth), WAIT).toBeGreaterThan(0);
    await page.screenshot({ path: join(screenshots, "9-downloaded.png"), fullPage: true });

    // The task's log shows the download URL the page asked for.
    await task.getByRole("link", { name: "details and JSON-RPC log" }).click();
    await page.getByTestId("rpc-log-section").locator("summary").first().click();
    await page.getByTestId("rpc-log").waitFor(WAIT);
    expect(await page.getByTestId("rpc-log").textContent()).toContain('"name": "file_download_url"');
    // The step waterfall, as the server journaled it: the flaky statistics step took two attempts.
    const timeline = page.getByTestId("waterfall");
    await timeline.waitFor(WAIT);
    const rows = timeline.getByTestId("step-row");
    expect(await rows.evaluateAll((els) => els.map((el) => el.getAttribute("data-step")))).toEqual([
      "profile",
      "choose column",
      "compute statistics",
      "rate limit pause",
      "render",
    ]);
    const stats = timeline.locator('[data-step="compute statistics"]');
    expect(await stats.getAttribute("data-attempts")).toBe("2");
    expect(await stats.getAttribute("data-state")).toBe("done");
    expect(await timeline.locator('[data-testid="step-row"][data-state="done"]').count()).toBe(5);
    expect(await timeline.locator('[data-step="rate limit pause"]').getAttribute("data-kind")).toBe("sleep");
    await page.screenshot({ path: join(screenshots, "10-timeline.png"), fullPage: true });
    await page.goBack();
    await page.getByTestId("task-card").waitFor(WAIT);
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByTestId("connected").waitFor(WAIT);
  });

  it("refuses bytes that do not match the task's sha256, and saves nothing", async () => {
    const file = page.getByTestId("file-link");
    let downloads = 0;
    const count = () => downloads++;
    page.on("download", count);
    await page.route(isDownload, (route) =>
      route.request().method() === "GET"
        ? route.fulfill({ status: 200, contentType: "image/svg+xml", body: "<svg>not the chart</svg>" })
        : route.fallback(),
    );
    await file.getByTestId("download").click();
    const error = file.getByTestId("download-error");
    await error.waitFor(WAIT);
    const text = (await error.textContent()) ?? "";
    expect(text).toContain(`sha256 mismatch: the 24 B downloaded hash to ${sha256Hex("<svg>not the chart</svg>")}`);
    expect(text).toContain("The file was not saved.");
    expect(text).toContain("Next: Download again");
    expect(await file.getByTestId("download-verified").count()).toBe(0);
    await page.screenshot({ path: join(screenshots, "10-download-mismatch.png"), fullPage: true });
    await page.unroute(isDownload);

    // Untampered, the same button verifies and saves again.
    const [saved] = await Promise.all([page.waitForEvent("download", WAIT), file.getByTestId("download").click()]);
    await file.getByTestId("download-verified").waitFor(WAIT);
    expect(await file.getByTestId("download-error").count()).toBe(0);
    expect(saved.suggestedFilename()).toBe("weather.svg");
    page.off("download", count);
    expect(downloads).toBe(1);
  });

  it("shows why an upload failed, in the server's words, and retries it", async () => {
    const tampered = writeCsv("tampered.csv", sampleCsv(50));
    let corrupted = 0;
    await page.route(filesRoute, async (route: Route) => {
      const body = route.request().postDataBuffer();
      if (!isFilePatch(route.request()) || !body || corrupted > 0) return route.fallback();
      corrupted++;
      const altered = Buffer.from(body);
      altered[0] = altered[0] === 0x41 ? 0x42 : 0x41;
      return route.continue({ postData: altered });
    });
    await page.setInputFiles("#upload-input", tampered.path);
    await expect.poll(() => uploadState("tampered.csv"), WAIT).toBe("failed");
    const error = upload("tampered.csv").getByTestId("upload-error");
    const text = (await error.textContent()) ?? "";
    expect(text).toContain("The server refused the upload (HTTP 460)");
    expect(text).toContain("not the declared one; the upload was reset to offset 0");
    expect(text).toContain("Next: The bytes that arrived do not match the file's sha256.");
    const tamperedHandle = (await upload("tampered.csv").getByTestId("upload-handle").textContent()) ?? "";
    await page.screenshot({ path: join(screenshots, "11-upload-failed.png"), fullPage: true });
    await page.unrouteAll();
    expect(corrupted).toBe(1);

    await upload("tampered.csv").getByRole("button", { name: "Retry upload" }).click();
    await expect.poll(() => uploadState("tampered.csv"), WAIT).toBe("ready");
    expect(await upload("tampered.csv").getByTestId("upload-handle").textContent()).toBe(tamperedHandle);
    expect(await upload("tampered.csv").getByTestId("upload-sha256").textContent()).toBe(tampered.sha256);
    expect(await upload("tampered.csv").getByTestId("upload-error").count()).toBe(0);
  });

  it("says when a reload interrupted an upload, and resumes it from the server's offset with the same file", async () => {
    const big = writeCsv("big.csv", sampleCsv(80_000));
    expect(big.bytes.length).toBeGreaterThan(2 * CHUNK);
    // The first chunk goes through; the next is held (never reaches the server) until the reload has cancelled it,
    // so the server has exactly one chunk.
    let held = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let patches = 0;
    await page.route(filesRoute, async (route: Route) => {
      if (!isFilePatch(route.request())) return route.fallback();
      if (patches++ === 0) return route.fallback();
      held++;
      await released;
      await route.abort().catch(() => {});
    });
    await page.setInputFiles("#upload-input", big.path);
    await expect
      .poll(() => upload("big.csv").getByTestId("upload-bytes").textContent(), WAIT)
      .toContain(`, ${CHUNK} confirmed by the server`);
    const bigHandle = (await upload("big.csv").getByTestId("upload-handle").textContent()) ?? "";
    expect(bigHandle).toMatch(/^file_/);
    await expect.poll(() => held, WAIT).toBe(1);

    await page.reload();
    release();
    await page.unrouteAll({ behavior: "wait" });
    expect(patches).toBe(2);

    // After the reload: what happened, how far the server got, and the next step.
    const notice = upload("big.csv").getByTestId("upload-interrupted");
    await expect.poll(() => notice.textContent(), WAIT).toContain(`(${CHUNK} bytes)`);
    const text = (await notice.textContent()) ?? "";
    expect(text).toContain("The upload of big.csv was interrupted: the page was reloaded or closed while it ran.");
    expect(text).toContain(`The server has 1.0 MiB of`);
    expect(text).toContain(`Next: Choose big.csv again to resume from byte ${CHUNK}, or discard it.`);
    expect(await uploadState("big.csv")).toBe("interrupted");
    // The finished uploads are still there, ready.
    expect(await uploadState("weather.csv")).toBe("ready");
    await page.screenshot({ path: join(screenshots, "12-upload-interrupted.png"), fullPage: true });

    // Another file is not taken for it.
    const resume = upload("big.csv").getByTestId("resume-input");
    await resume.setInputFiles(weather.path);
    await expect
      .poll(() => notice.textContent(), WAIT)
      .toContain("weather.csv is not the file this upload was for (weather.csv");
    expect(await uploadState("big.csv")).toBe("interrupted");

    // The same file resumes the same handle from the server's offset.
    const offsets: string[] = [];
    const record = (request: Request) => {
      if (isFilePatch(request)) offsets.push(request.headers()["upload-offset"] ?? "?");
    };
    page.on("request", record);
    await resume.setInputFiles(big.path);
    await expect.poll(() => uploadState("big.csv"), WAIT).toBe("ready");
    page.off("request", record);
    expect(offsets[0]).toBe(String(CHUNK));
    expect(offsets).not.toContain("0");
    expect(await upload("big.csv").getByTestId("upload-handle").textContent()).toBe(bigHandle);
    expect(await upload("big.csv").getByTestId("upload-sha256").textContent()).toBe(big.sha256);
    const status = await toolResult("file_status", { handle: bigHandle });
    expect(status.structuredContent).toMatchObject({ state: "ready", size: big.bytes.length, sha256: big.sha256 });
    await page.screenshot({ path: join(screenshots, "13-upload-resumed.png"), fullPage: true });
  });

  it("shows the server's error envelope for an upload whose handle it no longer knows, and lets it go", async () => {
    const ghost = "file_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    await page.evaluate(
      ({ handle: stale, serverUrl }) => {
        const key = "durable-mcp-demo-client/uploads";
        const records = JSON.parse(localStorage.getItem(key) ?? "[]") as unknown[];
        records.unshift({
          id: stale,
          handle: stale,
          serverUrl,
          name: "ghost.csv",
          size: 10,
          mimeType: "text/csv",
          lastModified: 0,
          startedAt: new Date().toISOString(),
          state: "uploading",
          uploadUrl: `${new URL(serverUrl).origin}/files/${stale}?exp=1&sig=x`,
          sha256: "0".repeat(64),
          confirmed: 0,
          sent: 0,
        });
        localStorage.setItem(key, JSON.stringify(records));
      },
      { handle: ghost, serverUrl: `${origin}/mcp` },
    );
    await page.reload();
    await expect.poll(() => uploadState("ghost.csv"), WAIT).toBe("failed");
    const text = (await upload("ghost.csv").getByTestId("upload-error").textContent()) ?? "";
    expect(text).toContain(`The server says: No file "${ghost}" is visible to you. (unknown_file)`);
    expect(text).toContain("Next: Check the handle.");
    expect(text).toContain("Upload the file again (it gets a new handle), or discard this one.");
    expect(await upload("ghost.csv").textContent()).toContain("Choose ghost.csv to upload it as a new file");
    await page.screenshot({ path: join(screenshots, "14-upload-unknown.png"), fullPage: true });
    await upload("ghost.csv").getByTestId("upload-discard").click();
    await expect.poll(() => upload("ghost.csv").count(), WAIT).toBe(0);
    expect(await upload("big.csv").count()).toBe(1);
    expect(pageErrors).toEqual([]);
  });
});
