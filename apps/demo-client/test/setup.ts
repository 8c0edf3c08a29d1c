// Vitest globalSetup for the browser test: makes sure Debian's chromium is installed, builds the page into a temp
// folder, and serves it with the demo Worker (the root wrangler.jsonc, its assets folder replaced by that build) under
// `wrangler dev` on a fresh persist dir, in its own process group (setsid) that the teardown kills whole.
import { execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
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

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = resolve(here, "..");
const workspaceRoot = resolve(packageRoot, "../..");
const CHROMIUM = "/usr/bin/chromium";
const DEFAULT_PORT = 8799;
const READY_TIMEOUT_MS = 120_000;

// The group leader: runs wrangler, and kills the whole group once the vitest process or wrangler is gone.
const WATCHDOG = `
owner=$1; shift
"$@" &
child=$!
while kill -0 "$owner" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done
kill -KILL 0
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  console.log(`${CHROMIUM} is missing: installing Debian's chromium (apt-get)`);
  execFileSync("sh", ["-c", "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium"], {
    stdio: "inherit",
    timeout: 540_000,
  });
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get install chromium did not provide ${CHROMIUM}`);
}

function isListening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      done(true);
    });
    socket.once("error", () => done(false));
    socket.setTimeout(2000, () => {
      socket.destroy();
      done(false);
    });
  });
}

/** Live (non-zombie) members of a process group. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] !== "Z" && Number(fields[2]) === pgid) members.push(Number(entry));
  }
  return members;
}

async function killGroup(pgid: number, signal: NodeJS.Signals): Promise<void> {
  try {
    process.kill(-pgid, signal);
  } catch {
    return; // already gone
  }
  const deadline = Date.now() + 10_000;
  while (groupMembers(pgid).length > 0) {
    if (Date.now() > deadline) {
      if (signal === "SIGKILL") throw new Error(`process group ${pgid} survived SIGKILL`);
      return killGroup(pgid, "SIGKILL");
    }
    await sleep(100);
  }
}

async function discovers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "server/discover",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "server/discover",
        params: {
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
          },
        },
      }),
      signal: AbortSignal.timeout(5000),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

export default async function setup(project: TestProject) {
  ensureChromium();
  const port = Number(process.env.DEMO_CLIENT_PORT ?? DEFAULT_PORT);
  if (await isListening(port)) {
    throw new Error(
      `demo-client test: something already listens on 127.0.0.1:${port}; stop it or set DEMO_CLIENT_PORT`,
    );
  }
  const root = mkdtempSync(join(tmpdir(), "demo-client-test-"));
  const assets = join(root, "www");
  const logPath = join(root, "wrangler.log");
  let pgid: number | undefined;
  const cleanUp = async () => {
    if (pgid !== undefined) await killGroup(pgid, "SIGTERM");
    pgid = undefined;
    rmSync(root, { recursive: true, force: true });
  };
  try {
    // The page, built on its own (not into dist/ or www/, which the build target and `npm start` own).
    execFileSync(join(packageRoot, "node_modules/.bin/vite"), ["build", "--outDir", assets, "--emptyOutDir"], {
      cwd: packageRoot,
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (!existsSync(join(assets, "index.html"))) throw new Error(`vite build wrote no ${assets}/index.html`);

    const log = openSync(logPath, "a");
    const args = [
      join(workspaceRoot, "node_modules/.bin/wrangler"),
      "dev",
      "--config",
      join(workspaceRoot, "wrangler.jsonc"),
      "--assets",
      assets,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(port + 1000),
      "--persist-to",
      join(root, "state"),
      "--log-level",
      "warn",
      "--show-interactive-dev-session=false",
    ];
    const child = spawn("setsid", ["sh", "-c", WATCHDOG, "demo-client-wrangler", String(process.pid), ...args], {
      cwd: workspaceRoot,
      stdio: ["ignore", log, log],
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
    });
    closeSync(log);
    if (child.pid === undefined) throw new Error("could not spawn setsid wrangler dev");
    pgid = child.pid;
    let exited = false;
    child.once("exit", () => (exited = true));
    child.unref();

    const origin = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (!(await discovers(`${origin}/mcp`))) {
      if (exited || Date.now() > deadline) {
        throw new Error(
          `wrangler dev did not come up on ${origin} (${exited ? "it exited" : "timed out"}):\n${readFileSync(logPath, "utf8")}`,
        );
      }
      await sleep(250);
    }
    project.provide("demo", { origin, chromium: CHROMIUM });
  } catch (error) {
    await cleanUp();
    throw error;
  }
  const onExit = () => {
    if (pgid !== undefined) {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        // gone
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  return async () => {
    process.off("exit", onExit);
    if (process.env.DEMO_CLIENT_KEEP_LOG) console.log(readFileSync(logPath, "utf8"));
    await cleanUp();
  };
}
