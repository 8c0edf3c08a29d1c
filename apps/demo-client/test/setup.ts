// Vitest globalSetup for the browser test: makes sure Debian's chromium is installed, builds the page into the
// server's temp root, and serves it with the demo Worker (the root wrangler.jsonc, its assets folder replaced by that
// build) under `wrangler dev` on a fresh persist dir, through @durable-mcp/test-harness.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WranglerDev, workspaceRoot } from "@durable-mcp/test-harness";
import type { TestProject } from "vitest/node";

export interface DemoServer {
  /** e.g. http://127.0.0.1:8799: the page at /, MCP at /mcp. */
  origin: string;
  chromium: string;
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

export default async function setup(project: TestProject) {
  ensureChromium();
  const fileUrlSecret = randomBytes(32).toString("hex");
  const server = WranglerDev.create({
    name: "demo-client-test",
    cwd: workspaceRoot,
    config: join(workspaceRoot, "wrangler.jsonc"),
    port: Number(process.env.DEMO_CLIENT_PORT ?? DEFAULT_PORT),
    portHint: "set DEMO_CLIENT_PORT",
    argsFor: ({ root }) => ["--assets", join(root, "www"), "--var", `FILE_URL_SECRET:${fileUrlSecret}`],
    onDispose: process.env.DEMO_CLIENT_KEEP_LOG ? (log) => console.log(log) : undefined,
  });
  try {
    // Before the build: a port in use fails at once.
    await server.assertPortsFree();
    // The page, built on its own (not into dist/ or www/, which the build target and `npm start` own).
    const assets = join(server.root, "www");
    execFileSync(join(packageRoot, "node_modules/.bin/vite"), ["build", "--outDir", assets, "--emptyOutDir"], {
      cwd: packageRoot,
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (!existsSync(join(assets, "index.html"))) throw new Error(`vite build wrote no ${assets}/index.html`);
    await server.start();
    project.provide("demo", { origin: server.origin, chromium: CHROMIUM });
  } catch (error) {
    await server.dispose();
    throw error;
  }
  return () => server.dispose();
}
