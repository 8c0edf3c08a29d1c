// Runs the lab Worker under `wrangler dev` for one suite, through @durable-mcp/test-harness: on a fixed port
// (refusing one in use), on a persist dir that outlives a SIGKILL of the whole process group so the suite can crash
// and restart it on the same local state. wrangler dev serves a bundle of the Worker built when the suite starts
// (`prebuilt`): it reloads the Worker whenever a source file changes, and an edit elsewhere in the workspace (the
// library, say) must not restart it in the middle of a suite. Its open-files limit is raised: wrangler dev holds a
// socket per log line of the Worker for a while, and 500 tasks log thousands.
// Here too: what the suites read about the running instance (workerd memory, resident task objects, V8 heap).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DevToolsSession, residentObjects, startWranglerDev, workerdRssKiB } from "@durable-mcp/test-harness";

const exampleRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The port every suite serves the lab on (one at a time); RELIABILITY_PORT overrides it. */
export const LAB_PORT = Number(process.env.RELIABILITY_PORT ?? 8797);

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
  const keep = process.env.RELIABILITY_LOG_DIR;
  const server = await startWranglerDev({
    name: "reliability-lab",
    cwd: exampleRoot,
    port: LAB_PORT,
    portHint: "set RELIABILITY_PORT",
    prebuilt: true,
    raiseFdLimit: true,
    argsFor: ({ instance }) => ["--var", `COUNTER_URL:${counterUrl}`, "--var", `INSTANCE:${instance}`],
    readyTimeoutMs: 90_000,
    readyPollMs: 100,
    onDispose: keep
      ? (log) => {
          mkdirSync(keep, { recursive: true });
          writeFileSync(join(keep, `${suite}-wrangler.log`), log);
        }
      : undefined,
  });
  return {
    url: server.url,
    get instance() {
      return server.instance;
    },
    get pgid() {
      return server.pgid ?? 0;
    },
    crash: () => server.stop("SIGKILL"),
    start: () => server.start(),
    workerdRssKiB: () => (server.pgid === null ? 0 : workerdRssKiB(server.pgid)),
    residentTaskRunners: () => (server.pgid === null ? 0 : residentObjects(server.pgid, "TaskRunner")),
    async isolateHeap() {
      const session = await DevToolsSession.open(server.spec.inspectorPort);
      try {
        return await session.call<{ usedSize: number; totalSize: number }>("Runtime.getHeapUsage");
      } finally {
        session.close();
      }
    },
    stop: () => server.dispose(),
    log: () => server.log(),
  };
}
