// Serves the bench Worker with `wrangler dev` on a fresh --persist-to dir through @durable-mcp/test-harness, and
// stops it (wrangler and the workerd it spawns: the whole process group) at the end, also on SIGINT/SIGTERM.
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startWranglerDev, type WranglerDev } from "@durable-mcp/test-harness";

export const exampleRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const workspaceRoot = resolve(exampleRoot, "../..");

export type BenchServer = WranglerDev;

/** Runs `body` against a fresh server on `port` (and port + 1000 for its inspector) and always stops it. */
export async function withServer<T>(port: number, body: (server: BenchServer) => Promise<T>): Promise<T> {
  const server = await startWranglerDev({
    name: "bench-server",
    cwd: exampleRoot,
    port,
    portHint: "set BENCH_PORT (uses it and it + 1000)",
    // wrangler dev holds a socket open per console.log line of the Worker (see docs/performance.md).
    raiseFdLimit: true,
    env: {
      // wrangler dev's local observability records a trace span for every storage statement and RPC (about
      // 40 µs of CPU per SQL statement here): a development aid with no counterpart in production, so it is off
      // unless BENCH_LOCAL_OBSERVABILITY=1 asks for it (see docs/performance.md).
      X_LOCAL_OBSERVABILITY: process.env.BENCH_LOCAL_OBSERVABILITY === "1" ? "true" : "false",
    },
  });
  const onSignal = (signal: NodeJS.Signals) => {
    void server.dispose().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
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
    await server.dispose();
  }
}
