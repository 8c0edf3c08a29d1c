// Starts the bench server with `wrangler dev` on a fresh --persist-to dir, in its own process group (setsid), and
// stops the whole group (wrangler and the workerd it spawns) at the end. Refuses to start on a port in use.
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const exampleRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const workspaceRoot = resolve(exampleRoot, "../..");
const wranglerBin = join(workspaceRoot, "node_modules/.bin/wrangler");
const READY_TIMEOUT_MS = 120_000;

// The group leader is this small shell: it runs wrangler and, when the bench process dies without stopping it
// (Ctrl-C on an outer tool, SIGKILL) or wrangler exits by itself, kills its whole group.
// It also lifts its soft open-files limit to the hard one first: wrangler dev holds a socket open per console.log
// line of the Worker (see docs/performance.md), and a 1024 soft limit would end a run that logs a few hundred.
const WATCHDOG = `
owner=$1; shift
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
"$@" &
child=$!
while kill -0 "$owner" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done
kill -KILL 0
`;

export interface BenchServer {
  /** The origin, e.g. http://127.0.0.1:8795 */
  origin: string;
  /** The MCP endpoint. */
  url: string;
  /** The process group id of wrangler dev and its workerd. */
  pgid: number;
  /** Stops the whole group, waits until it is gone, removes the persist dir. Idempotent. */
  stop(): Promise<void>;
  /** wrangler's output so far. */
  log(): string;
}

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

async function killGroup(pgid: number): Promise<void> {
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    try {
      process.kill(-pgid, signal);
    } catch {
      return; // ESRCH: already gone
    }
    const deadline = Date.now() + 10_000;
    while (groupMembers(pgid).length > 0 && Date.now() < deadline) await sleep(100);
    if (groupMembers(pgid).length === 0) return;
  }
  throw new Error(`bench: process group ${pgid} survived SIGKILL`);
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

/** Starts `wrangler dev` for examples/bench-server on `port` and waits until /mcp answers server/discover. */
export async function startServer(port: number): Promise<BenchServer> {
  // Its own inspector port too: wrangler dev processes starting at once would all take the default 9229.
  const inspectorPort = port + 1000;
  for (const taken of [port, inspectorPort]) {
    if (await isListening(taken)) {
      throw new Error(
        `bench: something already listens on 127.0.0.1:${taken}; stop it or set BENCH_PORT (uses it and it + 1000)`,
      );
    }
  }
  const root = mkdtempSync(join(tmpdir(), "bench-server-"));
  const logFile = join(root, "wrangler.log");
  const log = openSync(logFile, "a");
  const args = [
    wranglerBin,
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--inspector-port",
    String(inspectorPort),
    "--persist-to",
    join(root, "state"),
    "--log-level",
    "warn",
    "--show-interactive-dev-session=false",
  ];
  // Not `detached`: setsid then calls setsid(2) without forking, so the child's pid is the new group's id.
  const child = spawn("setsid", ["sh", "-c", WATCHDOG, "bench-wrangler", String(process.pid), ...args], {
    cwd: exampleRoot,
    stdio: ["ignore", log, log],
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      CI: "true",
      // wrangler dev's local observability records a trace span for every storage statement and RPC (about
      // 40 µs of CPU per SQL statement here): a development aid with no counterpart in production, so it is off
      // unless BENCH_LOCAL_OBSERVABILITY=1 asks for it (see docs/performance.md).
      X_LOCAL_OBSERVABILITY: process.env.BENCH_LOCAL_OBSERVABILITY === "1" ? "true" : "false",
    },
  });
  closeSync(log);
  const pgid = child.pid;
  if (pgid === undefined) throw new Error("bench: could not spawn setsid wrangler dev");
  let exited = false;
  child.once("exit", () => (exited = true));
  child.unref();

  const readLog = () => {
    try {
      return readFileSync(logFile, "utf8");
    } catch {
      return "";
    }
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", onExit);
    try {
      await killGroup(pgid);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
  // Last resort on a plain exit: the group must not outlive us (the watchdog would also see us gone).
  const onExit = () => {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // already gone
    }
    rmSync(root, { recursive: true, force: true });
  };
  process.once("exit", onExit);

  const origin = `http://127.0.0.1:${port}`;
  const url = `${origin}/mcp`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await discovers(url))) {
    if (exited || Date.now() > deadline) {
      const output = readLog();
      await stop();
      throw new Error(
        `bench: wrangler dev did not come up on ${url} (${exited ? "it exited" : "timed out"}):\n${output}`,
      );
    }
    await sleep(250);
  }
  return { origin, url, pgid, stop, log: readLog };
}

/** Runs `body` against a fresh server and always stops it, also on SIGINT/SIGTERM. */
export async function withServer<T>(port: number, body: (server: BenchServer) => Promise<T>): Promise<T> {
  const server = await startServer(port);
  const onSignal = (signal: NodeJS.Signals) => {
    void server.stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await body(server);
  } catch (error) {
    const tail = server.log().split("\n").slice(-40).join("\n");
    if (tail.trim()) console.error(`bench: wrangler output (last lines):\n${tail}`);
    throw error;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await server.stop();
  }
}
