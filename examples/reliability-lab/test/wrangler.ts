// Runs the lab Worker under `wrangler dev` for one suite: in its own process group (setsid) led by a small shell
// watchdog, on a fixed port (refusing one in use), with its own inspector port, on a persist dir that outlives a
// SIGKILL of the whole group so the suite can crash and restart it on the same local state.
// wrangler dev serves a bundle of the Worker built when the suite starts (`wrangler deploy --dry-run`, then
// `--no-bundle`): it reloads the Worker whenever a source file changes, and an edit elsewhere in the workspace
// (the library, say) must not restart it in the middle of a suite.
import { spawn, spawnSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const exampleRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const workspaceRoot = resolve(exampleRoot, "../..");
const wranglerBin = join(workspaceRoot, "node_modules/.bin/wrangler");
const READY_TIMEOUT_MS = 90_000;

/** The port every suite serves the lab on (one at a time); RELIABILITY_PORT overrides it. */
export const LAB_PORT = Number(process.env.RELIABILITY_PORT ?? 8797);

// The group leader: lifts its soft open-files limit to the hard one (wrangler dev holds a socket per log line of
// the Worker for a while, and 500 tasks log thousands), starts wrangler and, when the test process is gone (or
// wrangler exits by itself), kills its whole group: no wrangler or workerd outlives the suite.
const WATCHDOG = `
owner=$1; shift
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
"$@" &
child=$!
while kill -0 "$owner" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done
kill -KILL 0
`;

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

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

interface ProcInfo {
  pid: number;
  comm: string;
}

/** The live (non-zombie) members of a process group. */
function groupMembers(pgid: number): ProcInfo[] {
  const members: ProcInfo[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so parse around the last ')'.
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    if (fields[0] !== "Z" && Number(fields[2]) === pgid) {
      members.push({ pid: Number(entry), comm: stat.slice(stat.indexOf("(") + 1, close) });
    }
  }
  return members;
}

/** Signals the group and waits until none of its processes is alive (escalating to SIGKILL after 10 s). */
async function killGroup(pgid: number, signal: NodeJS.Signals): Promise<void> {
  try {
    process.kill(-pgid, signal);
  } catch {
    return; // ESRCH: already gone
  }
  const deadline = Date.now() + 10_000;
  while (groupMembers(pgid).length > 0) {
    if (Date.now() > deadline) {
      if (signal === "SIGKILL") throw new Error(`process group ${pgid} survived SIGKILL`);
      return killGroup(pgid, "SIGKILL");
    }
    await sleep(25);
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

/**
 * Bundles the Worker into `root/bundle` and writes `root/wrangler.jsonc`: the example's configuration, serving that
 * bundle as it is. Returns the configuration's path.
 */
function snapshotWorker(root: string): string {
  const build = spawnSync(wranglerBin, ["deploy", "--dry-run", "--outdir", join(root, "bundle")], {
    cwd: exampleRoot,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
  });
  if (build.status !== 0) {
    throw new Error(`reliability-lab: wrangler deploy --dry-run failed:\n${build.stdout}\n${build.stderr}`);
  }
  // The example's wrangler.jsonc, read as JSON: our own file, whose comments are whole lines.
  const text = readFileSync(join(exampleRoot, "wrangler.jsonc"), "utf8")
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("//"))
    .join("\n")
    .replace(/,(\s*[}\]])/g, "$1");
  const config = { ...(JSON.parse(text) as Record<string, unknown>), main: "bundle/index.js", no_bundle: true };
  const path = join(root, "wrangler.jsonc");
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

/** One Chrome DevTools Protocol call to the Worker's isolate through wrangler's inspector proxy. */
async function inspect<T>(method: string): Promise<T> {
  // The proxy only admits DevTools connections from a local Origin. (`headers` is undici's extension to WebSocket.)
  const init = { headers: { origin: "http://localhost" } } as unknown as string[];
  const socket = new WebSocket(`ws://127.0.0.1:${LAB_PORT + 1000}/ws`, init);
  try {
    return await new Promise<T>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`inspector: no answer to ${method}`)), 10_000);
      socket.addEventListener("error", () => {
        clearTimeout(timer);
        fail(new Error(`inspector: cannot connect to port ${LAB_PORT + 1000}`));
      });
      socket.addEventListener("open", () => socket.send(JSON.stringify({ id: 1, method })));
      socket.addEventListener("message", (event) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: T; error?: unknown };
        if (message.id !== 1) return;
        clearTimeout(timer);
        if (message.result) done(message.result);
        else fail(new Error(`inspector: ${method} failed: ${JSON.stringify(message.error)}`));
      });
    });
  } finally {
    socket.close();
  }
}

export interface LabServer {
  /** The MCP endpoint. */
  url: string;
  /** The number of the running instance: 1 for the first start, +1 on every restart. */
  instance: number;
  /** Process group id of the running instance (0 while stopped). */
  pgid: number;
  /** Kills the running instance's whole group with SIGKILL (a crash) and waits until every process is gone. */
  crash(): Promise<void>;
  /** Starts the next instance on the same persist dir and waits until it answers. */
  start(): Promise<void>;
  /** Resident memory (VmRSS, KiB) of the running instance's workerd processes, summed. */
  workerdRssKiB(): number;
  /** TaskRunner objects resident in workerd now: the SQLite databases of task objects it holds open. */
  residentTaskRunners(): number;
  /** The Worker isolate's V8 heap (bytes), read through wrangler's inspector port (`Runtime.getHeapUsage`). */
  isolateHeap(): Promise<{ usedSize: number; totalSize: number }>;
  /** Stops the group (SIGTERM, then SIGKILL) and removes the persist dir. Idempotent. */
  stop(): Promise<void>;
  /** wrangler's output of every instance so far. */
  log(): string;
}

/**
 * Serves examples/reliability-lab with `wrangler dev` on LAB_PORT; every effect its steps report goes to
 * `counterUrl`, tagged with the instance number. With RELIABILITY_LOG_DIR set, `stop` keeps wrangler's output
 * (every instance's, the Worker's task event lines included) there as `<suite>-wrangler.log`.
 */
export async function startLab(suite: string, counterUrl: string): Promise<LabServer> {
  const root = mkdtempSync(join(tmpdir(), "reliability-lab-"));
  const logFile = join(root, "wrangler.log");
  const url = `http://127.0.0.1:${LAB_PORT}/mcp`;
  let stopped = false;
  let config: string | undefined;

  const server: LabServer = {
    url,
    instance: 0,
    pgid: 0,
    async start() {
      if (await isListening(LAB_PORT)) {
        throw new Error(
          `reliability-lab: something already listens on 127.0.0.1:${LAB_PORT}; stop it or set RELIABILITY_PORT`,
        );
      }
      config ??= snapshotWorker(root);
      const instance = server.instance + 1;
      const log = openSync(logFile, "a");
      const args = [
        wranglerBin,
        "dev",
        "--config",
        config,
        "--ip",
        "127.0.0.1",
        "--port",
        String(LAB_PORT),
        // Its own inspector port: parallel wrangler dev processes would all take the default 9229.
        "--inspector-port",
        String(LAB_PORT + 1000),
        "--persist-to",
        join(root, "state"),
        "--var",
        `COUNTER_URL:${counterUrl}`,
        "--var",
        `INSTANCE:${instance}`,
        "--log-level",
        "warn",
        "--show-interactive-dev-session=false",
      ];
      // Not `detached`: setsid then calls setsid(2) without forking, so the child's pid is the new group's id.
      const child = spawn("setsid", ["sh", "-c", WATCHDOG, "reliability-lab", String(process.pid), ...args], {
        cwd: root,
        stdio: ["ignore", log, log],
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      });
      closeSync(log);
      const pgid = child.pid;
      if (pgid === undefined) throw new Error("reliability-lab: could not spawn setsid wrangler dev");
      let exited = false;
      child.once("exit", () => (exited = true));
      child.unref();
      server.pgid = pgid;
      server.instance = instance;

      const deadline = Date.now() + READY_TIMEOUT_MS;
      while (!(await discovers(url))) {
        if (exited || Date.now() > deadline) {
          await killGroup(pgid, "SIGKILL");
          server.pgid = 0;
          throw new Error(
            `reliability-lab: wrangler dev did not come up on ${url} (${exited ? "it exited" : "timed out"}):\n` +
              server.log().split("\n").slice(-40).join("\n"),
          );
        }
        await sleep(100);
      }
    },
    async crash() {
      if (server.pgid === 0) return;
      await killGroup(server.pgid, "SIGKILL");
      server.pgid = 0;
      const deadline = Date.now() + 10_000;
      while (await isListening(LAB_PORT)) {
        if (Date.now() > deadline) throw new Error(`reliability-lab: port ${LAB_PORT} still in use after the kill`);
        await sleep(50);
      }
    },
    workerdRssKiB() {
      let total = 0;
      for (const { pid, comm } of groupMembers(server.pgid)) {
        if (comm !== "workerd") continue;
        try {
          const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
          if (match) total += Number(match[1]);
        } catch {
          // exited meanwhile
        }
      }
      return total;
    },
    residentTaskRunners() {
      const open = new Set<string>();
      for (const { pid, comm } of groupMembers(server.pgid)) {
        if (comm !== "workerd") continue;
        let fds: string[];
        try {
          fds = readdirSync(`/proc/${pid}/fd`);
        } catch {
          continue;
        }
        for (const fd of fds) {
          try {
            const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
            if (/-TaskRunner\/[0-9a-f]{64}\.sqlite$/.test(target)) open.add(target);
          } catch {
            // closed meanwhile
          }
        }
      }
      return open.size;
    },
    isolateHeap() {
      return inspect<{ usedSize: number; totalSize: number }>("Runtime.getHeapUsage");
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.off("exit", onExit);
      try {
        if (server.pgid !== 0) await killGroup(server.pgid, "SIGTERM");
        server.pgid = 0;
        const keep = process.env.RELIABILITY_LOG_DIR;
        if (keep) {
          mkdirSync(keep, { recursive: true });
          copyFileSync(logFile, join(keep, `${suite}-wrangler.log`));
        }
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
    log() {
      try {
        return readFileSync(logFile, "utf8");
      } catch {
        return "";
      }
    },
  };
  // Last resort on a plain exit of the test process: the group must not outlive it (the watchdog also sees it gone).
  const onExit = () => {
    if (server.pgid !== 0) {
      try {
        process.kill(-server.pgid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once("exit", onExit);
  try {
    await server.start();
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}
