// The one way the suites run a Worker under `wrangler dev`. Each server gets a temp root holding its --persist-to
// dir (`state/`), its output (`wrangler.log`, appended by every start) and the running group's id (`wrangler.pid`).
// wrangler runs in a process group of its own (setsid) led by a small shell watchdog, so stopping the group also
// stops the workerd processes wrangler spawns, and a test process that dies without its teardown (Ctrl-C, a closed
// output pipe, SIGKILL) takes the group and the root with it. Ports are checked free first (the server's and its
// inspector's: parallel wrangler dev processes would all take the default 9229), readiness is a POSTed
// server/discover, and the group can be killed (SIGKILL: a crash) and started again on the same state, also from
// another process than the one that started it (`WranglerDev.attach`).
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseJsoncText, printParseErrorCode, type ParseError } from "jsonc-parser";
import { McpHttpClient, sleep } from "./mcp.ts";
import { isListening, killGroup, signalGroup } from "./processes.ts";

export const workspaceRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const wranglerBin = join(workspaceRoot, "node_modules/.bin/wrangler");
// Every wrangler run of the suites: no metrics, non-interactive, and the workspace's library bundled from its
// TypeScript source (the "durable-mcp-source" export condition, before wrangler's own defaults).
const WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: "false",
  CI: "true",
  WRANGLER_BUILD_CONDITIONS: "durable-mcp-source,workerd,worker,browser",
};

// The group leader. It lifts its soft open-files limit to the hard one when asked (wrangler dev holds a socket
// open per console.log line of the Worker for a while, and a 1024 soft limit ends a run that logs a few hundred),
// starts wrangler and, once the owner (the test process) or wrangler is gone, kills its whole group; when the
// owner died without a teardown it also removes the server's root.
const WATCHDOG = `
owner=$1; root=$2; raise=$3; shift 3
if [ "$raise" = 1 ]; then ulimit -n "$(ulimit -Hn)" 2>/dev/null || true; fi
"$@" &
child=$!
while kill -0 "$owner" 2>/dev/null && kill -0 "$child" 2>/dev/null; do sleep 1; done
kill -0 "$owner" 2>/dev/null || rm -rf "$root"
kill -KILL 0
`;

export interface WranglerDevOptions {
  /** Names the server in errors, its temp root (`<name>-` plus a random suffix) and its watchdog (`<name>-wrangler`). */
  name: string;
  /** Where wrangler runs (and, without `config`, finds its wrangler.jsonc). */
  cwd: string;
  /** --config; wrangler's own lookup from `cwd` when absent. */
  config?: string;
  port: number;
  /** --inspector-port; port + 1000 unless given. */
  inspectorPort?: number;
  /** More `wrangler dev` arguments for every start, e.g. ["--assets", dir]. */
  args?: string[];
  /** More arguments for one start, from its instance number (1 for the first start, +1 on every restart). */
  argsFor?: (start: { instance: number; root: string }) => string[];
  /** More environment for wrangler (WRANGLER_SEND_METRICS=false and CI=true are always set). */
  env?: Record<string, string>;
  /**
   * Serve a bundle built once, at the first start (`wrangler deploy --dry-run`), with `no_bundle`: wrangler dev then
   * reloads nothing when a source file changes mid-suite. The configuration is copied into the root with its `main`
   * pointing at the bundle, so it must not name other files by relative path.
   */
  prebuilt?: boolean;
  /** Lift the soft open-files limit of wrangler and workerd to the hard one. */
  raiseFdLimit?: boolean;
  /** How long a start may take to answer server/discover (default 120 s), and how often it is asked (250 ms). */
  readyTimeoutMs?: number;
  readyPollMs?: number;
  /** Headers of that readiness request, e.g. the Authorization a server with auth requires. */
  readyHeaders?: Record<string, string>;
  /** How to get another port, for the "port in use" error, e.g. "set E2E_PORT to a free port". */
  portHint?: string;
  /** Gets wrangler's output of every start when the server is disposed of (before its root goes). */
  onDispose?: (log: string) => void;
}

/** A served Worker as plain data (it survives vitest's provide/inject): enough for `WranglerDev.attach`. */
export interface WranglerDevSpec {
  name: string;
  /** e.g. http://127.0.0.1:8791 */
  origin: string;
  /** The MCP endpoint: origin + /mcp. */
  url: string;
  port: number;
  inspectorPort: number;
  cwd: string;
  config: string | null;
  args: string[];
  env: Record<string, string>;
  prebuilt: boolean;
  raiseFdLimit: boolean;
  readyTimeoutMs: number;
  readyPollMs: number;
  readyHeaders: Record<string, string>;
  portHint: string;
  /** The temp dir holding state/, wrangler.log and wrangler.pid. */
  root: string;
  /** The process whose death ends the server (its watchdog's owner). */
  ownerPid: number;
}

/**
 * Parses JSON with comments and trailing commas (a wrangler.jsonc) with `jsonc-parser`, the parser wrangler itself
 * uses. It recovers from errors by default; here any error throws, naming the first one and its line:column.
 */
export function parseJsonc(text: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parseJsoncText(text, errors, { allowTrailingComma: true, disallowComments: false });
  const [first] = errors;
  if (first) {
    const before = text.slice(0, first.offset).split("\n");
    const where = `${before.length}:${before.at(-1)!.length + 1}`;
    throw new SyntaxError(`JSONC: ${printParseErrorCode(first.error)} at ${where}`);
  }
  return value;
}

async function answersDiscover(url: string, headers: Record<string, string>): Promise<boolean> {
  try {
    const mcp = new McpHttpClient(url);
    const { response } = await mcp.post(
      "server/discover",
      { _meta: mcp.envelope({ tasks: false }) },
      { signal: AbortSignal.timeout(5000), headers },
    );
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}

/** One `wrangler dev` server: its root, its current process group (if running) and how to (re)start and stop it. */
export class WranglerDev {
  readonly spec: WranglerDevSpec;
  /** Starts made through this handle: the running instance's number (0 before the first start). */
  instance = 0;
  readonly #argsFor: WranglerDevOptions["argsFor"];
  readonly #onDispose: WranglerDevOptions["onDispose"];
  #onExit: (() => void) | undefined;
  #disposed = false;

  private constructor(spec: WranglerDevSpec, options: Partial<WranglerDevOptions> = {}) {
    this.spec = spec;
    this.#argsFor = options.argsFor;
    this.#onDispose = options.onDispose;
  }

  /**
   * A server, not started yet: makes its temp root, and makes sure a plain exit of this process kills the group
   * that is running then and removes the root (the watchdog also sees this process gone).
   */
  static create(options: WranglerDevOptions): WranglerDev {
    const origin = `http://127.0.0.1:${options.port}`;
    const server = new WranglerDev(
      {
        name: options.name,
        origin,
        url: `${origin}/mcp`,
        port: options.port,
        inspectorPort: options.inspectorPort ?? options.port + 1000,
        cwd: options.cwd,
        config: options.config ?? null,
        args: options.args ?? [],
        env: options.env ?? {},
        prebuilt: options.prebuilt ?? false,
        raiseFdLimit: options.raiseFdLimit ?? false,
        readyTimeoutMs: options.readyTimeoutMs ?? 120_000,
        readyPollMs: options.readyPollMs ?? 250,
        readyHeaders: options.readyHeaders ?? {},
        portHint: options.portHint ?? "pass another port",
        root: mkdtempSync(join(tmpdir(), `${options.name}-`)),
        ownerPid: process.pid,
      },
      options,
    );
    server.#onExit = () => {
      const pgid = server.pgid;
      if (pgid !== null) signalGroup(pgid, "SIGKILL");
      rmSync(server.spec.root, { recursive: true, force: true });
    };
    process.once("exit", server.#onExit);
    return server;
  }

  /** The server `spec` describes, from any process: to stop or restart it there (its root stays the owner's). */
  static attach(spec: WranglerDevSpec): WranglerDev {
    return new WranglerDev(spec);
  }

  get url(): string {
    return this.spec.url;
  }
  get origin(): string {
    return this.spec.origin;
  }
  get root(): string {
    return this.spec.root;
  }
  /** The --persist-to dir: the runtime workerd keeps files under it open (`workerdRssByRole`). */
  get stateDir(): string {
    return join(this.spec.root, "state");
  }
  get logFile(): string {
    return join(this.spec.root, "wrangler.log");
  }
  get #pidFile(): string {
    return join(this.spec.root, "wrangler.pid");
  }

  /** The running group's id (its watchdog's pid), or null while stopped. */
  get pgid(): number | null {
    try {
      const pid = Number(readFileSync(this.#pidFile, "utf8"));
      return Number.isInteger(pid) && pid > 1 ? pid : null;
    } catch {
      return null;
    }
  }

  /** wrangler's output of every start so far. */
  log(): string {
    try {
      return readFileSync(this.logFile, "utf8");
    } catch {
      return "";
    }
  }

  /** Throws when something already listens on the server's port or its inspector port. */
  async assertPortsFree(): Promise<void> {
    const { name, port, inspectorPort, portHint } = this.spec;
    for (const taken of [port, inspectorPort]) {
      if (await isListening(taken)) {
        throw new Error(
          `${name}: something already listens on 127.0.0.1:${taken} (wrangler dev needs ${port} and ${inspectorPort} ` +
            `for its inspector); stop it or ${portHint}`,
        );
      }
    }
  }

  /** Starts the next instance on the server's persist dir and waits until it answers server/discover. */
  async start(): Promise<void> {
    const { spec } = this;
    await this.assertPortsFree();
    const config = spec.prebuilt ? this.#snapshot() : spec.config;
    const instance = this.instance + 1;
    const args = [
      wranglerBin,
      "dev",
      ...(config === null ? [] : ["--config", config]),
      "--ip",
      "127.0.0.1",
      "--port",
      String(spec.port),
      "--inspector-port",
      String(spec.inspectorPort),
      "--persist-to",
      this.stateDir,
      "--log-level",
      "warn",
      "--show-interactive-dev-session=false",
      ...spec.args,
      ...(this.#argsFor?.({ instance, root: spec.root }) ?? []),
    ];
    const logFrom = existsSync(this.logFile) ? statSync(this.logFile).size : 0;
    const log = openSync(this.logFile, "a");
    // Not `detached`: setsid then runs setsid(2) itself without forking, so the pid is the new group's id.
    const watchdog = [
      WATCHDOG,
      `${spec.name}-wrangler`,
      String(spec.ownerPid),
      spec.root,
      spec.raiseFdLimit ? "1" : "0",
    ];
    const child = spawn("setsid", ["sh", "-c", ...watchdog, ...args], {
      cwd: spec.prebuilt ? spec.root : spec.cwd,
      stdio: ["ignore", log, log],
      env: { ...process.env, ...WRANGLER_ENV, ...spec.env },
    });
    closeSync(log);
    let exited = false;
    child.once("exit", () => (exited = true));
    child.once("error", () => (exited = true));
    const pgid = child.pid;
    if (pgid === undefined) throw new Error(`${spec.name}: could not spawn setsid wrangler dev`);
    child.unref();
    writeFileSync(this.#pidFile, String(pgid));
    this.instance = instance;

    const deadline = Date.now() + spec.readyTimeoutMs;
    while (!(await answersDiscover(spec.url, spec.readyHeaders))) {
      if (exited || Date.now() > deadline) {
        await killGroup(pgid, "SIGKILL");
        rmSync(this.#pidFile, { force: true });
        const output = this.log().slice(logFrom).split("\n").slice(-80).join("\n");
        throw new Error(
          `${spec.name}: wrangler dev did not come up on ${spec.url} (${exited ? "it exited" : "timed out"}):\n${output}`,
        );
      }
      await sleep(spec.readyPollMs);
    }
  }

  /**
   * Stops the running group with `signal` (SIGKILL: a crash; SIGTERM escalates to SIGKILL after 10 s), waits until
   * every process of it is gone and the port is free. The state stays for the next start.
   */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const pgid = this.pgid;
    if (pgid === null) return;
    await killGroup(pgid, signal);
    rmSync(this.#pidFile, { force: true });
    const deadline = Date.now() + 10_000;
    while (await isListening(this.spec.port)) {
      if (Date.now() > deadline) {
        throw new Error(`${this.spec.name}: port ${this.spec.port} still in use after stopping wrangler dev`);
      }
      await sleep(50);
    }
  }

  /** Stops the running group (SIGKILL by default: a crash), then starts the next instance on the same state. */
  async restart(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    await this.stop(signal);
    await this.start();
  }

  /** Stops the server (SIGTERM), hands its output to `onDispose` and removes its root. Idempotent. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    if (this.#onExit) process.off("exit", this.#onExit);
    try {
      await this.stop("SIGTERM");
    } finally {
      try {
        this.#onDispose?.(this.log());
      } finally {
        rmSync(this.spec.root, { recursive: true, force: true });
      }
    }
  }

  /**
   * Builds the Worker into `root/bundle` once and writes `root/wrangler.jsonc`: the configuration, serving that
   * bundle as it is. Returns the configuration's path.
   */
  #snapshot(): string {
    const { spec } = this;
    const path = join(spec.root, "wrangler.jsonc");
    if (existsSync(path)) return path;
    const source = spec.config ?? join(spec.cwd, "wrangler.jsonc");
    const outdir = join(spec.root, "bundle");
    const build = spawnSync(
      wranglerBin,
      ["deploy", "--dry-run", "--outdir", outdir, ...(spec.config === null ? [] : ["--config", spec.config])],
      {
        cwd: spec.cwd,
        encoding: "utf8",
        env: { ...process.env, ...WRANGLER_ENV, ...spec.env },
      },
    );
    if (build.status !== 0) {
      throw new Error(`${spec.name}: wrangler deploy --dry-run failed:\n${build.stdout}\n${build.stderr}`);
    }
    const config = parseJsonc(readFileSync(source, "utf8")) as Record<string, unknown>;
    const main = `bundle/${basename(String(config.main)).replace(/\.[cm]?[jt]sx?$/, "")}.js`;
    if (!existsSync(join(spec.root, main))) throw new Error(`${spec.name}: the build wrote no ${main}`);
    writeFileSync(path, JSON.stringify({ ...config, main, no_bundle: true }, null, 2));
    return path;
  }
}

/** `WranglerDev.create` and `start`; a server that does not come up is disposed of before the error is thrown. */
export async function startWranglerDev(options: WranglerDevOptions): Promise<WranglerDev> {
  const server = WranglerDev.create(options);
  try {
    await server.start();
  } catch (error) {
    await server.dispose();
    throw error;
  }
  return server;
}
