// Vitest globalSetup for the browser test: makes sure Debian's chromium is installed, builds the page (production
// build) into a temp folder, and serves it with the demo Worker (the root wrangler.jsonc, its assets folder replaced
// by that build; the Worker also serves the page's agent) under `wrangler dev` on a fresh persist dir, through
// @durable-mcp/test-harness. The tests get the server's spec, to stop and restart it with `WranglerDev.attach`.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WranglerDev, workspaceRoot, type WranglerDevSpec } from "@durable-mcp/test-harness";
import type { TestProject } from "vitest/node";

export interface DemoServer {
  /** e.g. http://127.0.0.1:8799: the page at /, MCP at /mcp. */
  origin: string;
  chromium: string;
  /** The `wrangler dev` serving it, for `WranglerDev.attach(server).stop()` / `.start()` from a test file. */
  server: WranglerDevSpec;
  /**
   * The port of the test files' own plain Node HTTP servers that WATCHER_SERVERS lists (…/bare/mcp, …/text/mcp):
   * fixed here because the server's list is; a test file listens on it while it runs (files run one at a time).
   */
  listedPort: number;
  /** The operator token the server requires on /operator (the console's sign-in is tested with it). */
  operatorToken: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    demo: DemoServer;
  }
}

const packageRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CHROMIUM = "/usr/bin/chromium";
const DEFAULT_PORT = 8799;

function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  console.log(`${CHROMIUM} is missing: installing Debian's chromium (apt-get)`);
  execFileSync("sh", ["-c", "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium"], {
    stdio: "inherit",
    timeout: 540_000,
  });
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get install chromium did not provide ${CHROMIUM}`);
}

/** A port free right now (the kernel's pick), for a server a test file starts later. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, "127.0.0.1", done));
  const { port } = probe.address() as { port: number };
  await new Promise((done) => probe.close(done));
  return port;
}

/** The servers the page's agent may call in the tests: its own /mcp (and /healthz, not MCP), a port nothing listens on, and the test files' own. */
export function watcherServers(listedPort: number): string[] {
  return [
    "/mcp",
    "/healthz",
    "http://127.0.0.1:9/mcp",
    `http://127.0.0.1:${listedPort}/bare/mcp`,
    `http://127.0.0.1:${listedPort}/text/mcp`,
  ];
}

export default async function setup(project: TestProject) {
  ensureChromium();
  const fileUrlSecret = randomBytes(32).toString("hex");
  const operatorToken = randomBytes(32).toString("hex");
  const listedPort = await freePort();
  // Not under the server's root: its arguments must be fixed at creation, so that a start from a test file (which
  // has only the spec) serves the same page with the same secret.
  const assets = mkdtempSync(join(tmpdir(), "demo-client-www-"));
  const server = WranglerDev.create({
    name: "demo-client-test",
    cwd: workspaceRoot,
    config: join(workspaceRoot, "wrangler.jsonc"),
    port: Number(process.env.DEMO_CLIENT_PORT ?? DEFAULT_PORT),
    portHint: "set DEMO_CLIENT_PORT",
    args: [
      "--assets",
      assets,
      "--var",
      `FILE_URL_SECRET:${fileUrlSecret}`,
      "--var",
      `WATCHER_SESSION_SECRET:${randomBytes(32).toString("hex")}`,
      "--var",
      `WATCHER_SERVERS:${watcherServers(listedPort).join(",")}`,
      // Set, so that the operator API asks for it even on loopback (the console's sign-in).
      "--var",
      `OPERATOR_TOKEN:${operatorToken}`,
    ],
    onDispose: process.env.DEMO_CLIENT_KEEP_LOG ? (log) => console.log(log) : undefined,
  });
  try {
    // Before the build: a port in use fails at once.
    await server.assertPortsFree();
    // The page, built on its own (not into dist/ or www/, which the build target and `npm start` own), as shipped:
    // vitest sets NODE_ENV=test, which would give React's development build.
    execFileSync(join(packageRoot, "node_modules/.bin/vite"), ["build", "--outDir", assets, "--emptyOutDir"], {
      cwd: packageRoot,
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, NODE_ENV: "production" },
    });
    if (!existsSync(join(assets, "index.html"))) throw new Error(`vite build wrote no ${assets}/index.html`);
    await server.start();
    project.provide("demo", {
      origin: server.origin,
      chromium: CHROMIUM,
      server: server.spec,
      listedPort,
      operatorToken,
    });
  } catch (error) {
    await server.dispose();
    rmSync(assets, { recursive: true, force: true });
    throw error;
  }
  // A test may have restarted the server: the teardown stops whatever group runs then.
  return async () => {
    try {
      await server.dispose();
    } finally {
      rmSync(assets, { recursive: true, force: true });
    }
  };
}
