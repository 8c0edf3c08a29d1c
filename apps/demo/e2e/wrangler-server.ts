// Vitest globalSetup: serves the demo Worker (../../wrangler.jsonc) with `wrangler dev` on a fresh persist dir, in
// its own process group (via setsid) so that stopping it also stops the workerd processes wrangler spawns.
// Also exports the helpers the tests use to crash and restart that server on the same persist dir.
import { spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

/** What the tests get through `inject("wrangler")`. Everything else about the server lives in `root`. */
export interface WranglerServer {
  url: string;
  port: number;
  /** Temp dir holding `state/` (the --persist-to dir), `wrangler.log` and `wrangler.pid`. */
  root: string;
  /** The vitest main process: when it is gone, the server's watchdog takes the whole group down. */
  ownerPid: number;
}

declare module "vitest" {
  export interface ProvidedContext {
    wrangler: WranglerServer;
  }
}

const here = dirname(fileURLToPath(import.meta.url));
const workspaceRoot = resolve(here, "../../..");
const wranglerBin = join(workspaceRoot, "node_modules/.bin/wrangler");
const wranglerConfig = join(workspaceRoot, "wrangler.jsonc");
const DEFAULT_PORT = 8791;
const READY_TIMEOUT_MS = 120_000;

const WATCHDOG = `
owner=$1; root=$2; shift 2
"$@" &
child=$!
while kill -0 "$owner" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done
kill -0 "$owner" 2>/dev/null || rm -rf "$root"
kill -KILL 0
`;

const stateDir = (server: WranglerServer) => join(server.root, "state");
const logFile = (server: WranglerServer) => join(server.root, "wrangler.log");
const pidFile = (server: WranglerServer) => join(server.root, "wrangler.pid");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isListening(port: number): Promise<boolean> {
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

/** Process ids of the live (non-zombie) members of a process group. */
function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses, so parse from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] !== "Z" && Number(fields[2]) === pgid) members.push(Number(entry));
  }
  return members;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone
  }
}

/** Signals the whole process group and waits until none of its processes is left alive. */
export async function killGroup(pgid: number, signal: NodeJS.Signals, graceMs = 10_000): Promise<void> {
  signalGroup(pgid, signal);
  const deadline = Date.now() + graceMs;
  while (groupMembers(pgid).length > 0) {
    if (Date.now() > deadline) {
      if (signal === "SIGKILL") throw new Error(`process group ${pgid} survived SIGKILL`);
      return killGroup(pgid, "SIGKILL", graceMs);
    }
    await sleep(100);
  }
}

const DISCOVER = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "server/discover",
  params: {
    _meta: {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
    },
  },
});

async function discovers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "server/discover",
      },
      body: DISCOVER,
      signal: AbortSignal.timeout(5000),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/**
 * Starts `wrangler dev` for the server's port and persist dir in a new session (its own process group), records
 * its pid (= its process group id) in `wrangler.pid`, and waits until it answers `server/discover`.
 */
export async function startWrangler(server: WranglerServer): Promise<number> {
  if (await isListening(server.port)) {
    throw new Error(
      `e2e: something already listens on 127.0.0.1:${server.port}; stop it or set E2E_PORT to a free port`,
    );
  }
  const log = openSync(logFile(server), "a");
  const args = [
    wranglerBin,
    "dev",
    "--config",
    wranglerConfig,
    "--ip",
    "127.0.0.1",
    "--port",
    String(server.port),
    "--persist-to",
    stateDir(server),
    "--log-level",
    "warn",
    "--show-interactive-dev-session=false",
    // Its own inspector port: two wrangler dev processes starting at once would both take the default 9229.
    "--inspector-port",
    String(server.port + 1000),
  ];
  // Not `detached`: setsid then runs setsid(2) itself without forking, so the pid is the new group's id. The group
  // leader is a small shell watchdog: it starts wrangler and, should the vitest process die without its teardown
  // (Ctrl-C, a closed output pipe, SIGKILL), or wrangler exit by itself, kills its whole group.
  const child = spawn("setsid", ["sh", "-c", WATCHDOG, "e2e-wrangler", String(server.ownerPid), server.root, ...args], {
    cwd: join(workspaceRoot, "apps/demo"),
    stdio: ["ignore", log, log],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
  });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error("e2e: could not spawn setsid wrangler dev");
  let exited = false;
  child.once("exit", () => (exited = true));
  child.unref();
  writeFileSync(pidFile(server), String(pid));

  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await discovers(server.url))) {
    if (exited || Date.now() > deadline) {
      await killGroup(pid, "SIGKILL");
      const output = existsSync(logFile(server)) ? readFileSync(logFile(server), "utf8") : "";
      throw new Error(
        `e2e: wrangler dev did not come up on ${server.url} (${exited ? "it exited" : "timed out"}):\n${output}`,
      );
    }
    await sleep(250);
  }
  return pid;
}

function currentPid(server: WranglerServer): number | null {
  try {
    const pid = Number(readFileSync(pidFile(server), "utf8"));
    return Number.isInteger(pid) && pid > 1 ? pid : null;
  } catch {
    return null;
  }
}

/** Stops the current wrangler dev process group with `signal` (SIGKILL: a crash) and waits until it is gone. */
export async function stopWrangler(server: WranglerServer, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  const pid = currentPid(server);
  if (pid === null) return;
  await killGroup(pid, signal);
  rmSync(pidFile(server), { force: true });
  const deadline = Date.now() + 10_000;
  while (await isListening(server.port)) {
    if (Date.now() > deadline) throw new Error(`e2e: port ${server.port} still in use after stopping wrangler`);
    await sleep(100);
  }
}

/** Kills the server's whole process group (SIGKILL by default, a crash), then starts it on the same persist dir. */
export async function restartWrangler(server: WranglerServer, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
  await stopWrangler(server, signal);
  await startWrangler(server);
}

export default async function setup(project: TestProject) {
  const port = Number(process.env.E2E_PORT ?? DEFAULT_PORT);
  const server: WranglerServer = {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    root: mkdtempSync(join(tmpdir(), "demo-e2e-")),
    ownerPid: process.pid,
  };
  try {
    await startWrangler(server);
  } catch (error) {
    rmSync(server.root, { recursive: true, force: true });
    throw error;
  }
  project.provide("wrangler", server);
  // Belt and braces with the watchdog: a vitest that exits without running the teardown still ends the group.
  const onExit = () => {
    const pid = currentPid(server);
    if (pid !== null) signalGroup(pid, "SIGKILL");
    rmSync(server.root, { recursive: true, force: true });
  };
  process.once("exit", onExit);

  return async () => {
    process.off("exit", onExit);
    try {
      // A test may have restarted the server from its worker: the pid file names the group running now.
      await stopWrangler(server, "SIGTERM");
    } finally {
      if (process.env.E2E_KEEP_LOG) console.log(readFileSync(logFile(server), "utf8"));
      rmSync(server.root, { recursive: true, force: true });
    }
  };
}
