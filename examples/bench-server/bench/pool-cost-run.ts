// `pnpm bench:pool-cost`: what one one-step task costs the Durable Objects bill at a given create rate — objects
// brought up, calls into them (RPC and alarm deliveries), setAlarm, rows written — counted inside the objects by the
// bench-only counting subclass on /mcp-counted (src/counted-runner.ts), and the create p50 with and without the
// pre-created runners (docs/performance.md, "The runner pool at low traffic").
//
// For each rate: a fresh `wrangler dev` (a fresh isolate, so a fresh pool), `n` creates of `bench_steps {steps: 1}`
// sent open-loop every `intervalMs` (not waiting for the previous), then a pause for their runs and any 1 s alarm,
// one tasks/get per task (each must be completed), and the counts read. Counts, not timings, are what this machine's
// load leaves alone.
//   BENCH_PORT (default 8795)
//   BENCH_POOL_RATES: "intervalMs x creates" pairs, default "60000x4,1000x30,10x100" (1/min for 4 minutes, 1/s, 100/s)
//   BENCH_POOL_PATH: /mcp-counted (default: pre-created runners) or /mcp-counted-nopool (every create on a new object)
//   BENCH_POOL_LATENCY=N: instead, N interleaved rounds on one server of 100 creates back to back (each awaited), on
//     /mcp-counted and /mcp-counted-nopool in turn: create p50 of each
import { loadavg } from "node:os";
import { benchClient } from "./mcp.ts";
import { withServer } from "./server.ts";
import { ms, summarize } from "./stats.ts";

const port = Number(process.env.BENCH_PORT ?? 8795);
const oneStep = { steps: 1, payloadBytes: 0 };
const sleep = (delayMs: number) => new Promise((resolve) => setTimeout(resolve, delayMs));
const now = () => performance.now();

interface Counts {
  objects: number;
  constructed: number;
  calls: Record<string, number>;
  alarmDeliveries: number;
  setAlarms: number;
  armed: number;
  deleteAlls: number;
  rowsWritten: number;
  sqlRowsWritten: number;
  kvWrites: number;
}

async function counts(origin: string, reset = false): Promise<Counts> {
  return (await (await fetch(`${origin}/bench/counts${reset ? "?reset=1" : ""}`)).json()) as Counts;
}

function rates(): { intervalMs: number; n: number }[] {
  const spec = process.env.BENCH_POOL_RATES ?? "60000x4,1000x30,10x100";
  return spec.split(",").map((pair) => {
    const [intervalMs, n] = pair.split("x").map(Number);
    if (!Number.isFinite(intervalMs) || !Number.isInteger(n) || n! < 1) throw new Error(`bad BENCH_POOL_RATES ${pair}`);
    return { intervalMs: intervalMs!, n: n! };
  });
}

async function rateRun(intervalMs: number, n: number, path: string) {
  return withServer(port, async (server) => {
    const origin = server.origin;
    const client = benchClient(`${origin}${path}`);
    await counts(origin, true);
    const begin = now();
    const creates: Promise<{ taskId: string; ms: number }>[] = [];
    for (let i = 0; i < n; i++) {
      const due = begin + i * intervalMs;
      const wait = due - now();
      if (wait > 0) await sleep(wait);
      const sent = now();
      creates.push(
        client.startTask("bench_steps", oneStep).then((task) => ({ taskId: task.taskId, ms: now() - sent })),
      );
    }
    const created = await Promise.all(creates);
    // The rate the server saw: creates over the span from the first sent to the last answered (on a loaded machine
    // below the offered one once the creates queue).
    const servedPerSecond = n / ((now() - begin) / 1000);
    // The runs, a prepared runner's 1 s alarm and its re-arm, and the refill after the last create.
    await sleep(3_000);
    const counted = await counts(origin);
    for (const { taskId } of created) {
      const task = await client.getTask(taskId);
      if (task.status !== "completed") throw new Error(`task ${taskId} is ${task.status}`);
    }
    return { counted, servedPerSecond, create: summarize(created.map((c) => c.ms)) };
  });
}

function perTask(c: Counts, n: number) {
  const per = (value: number) => Number((value / n).toFixed(3));
  const { prepare = 0, create = 0 } = c.calls;
  const rpc = Object.values(c.calls).reduce((a, b) => a + b, 0);
  return {
    objects: per(c.objects),
    "calls (RPC + alarm deliveries)": per(rpc + c.alarmDeliveries),
    prepare: per(prepare),
    create: per(create),
    "alarm deliveries": per(c.alarmDeliveries),
    "still armed": per(c.armed),
    setAlarm: per(c.setAlarms),
    "rows written (SQL + KV + setAlarm)": per(c.rowsWritten),
    "SQL rows": per(c.sqlRowsWritten),
    "KV writes": per(c.kvWrites),
    deleteAll: per(c.deleteAlls),
  };
}

async function latencyRounds(rounds: number) {
  await withServer(port, async (server) => {
    const origin = server.origin;
    const results: Record<string, number[]> = { "/mcp-counted": [], "/mcp-counted-nopool": [] };
    await counts(origin, true);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? ["/mcp-counted", "/mcp-counted-nopool"] : ["/mcp-counted-nopool", "/mcp-counted"];
      for (const path of order) {
        const client = benchClient(`${origin}${path}`);
        const samples: number[] = [];
        for (let i = 0; i < 100; i++) {
          const begin = now();
          await client.startTask("bench_steps", oneStep);
          samples.push(now() - begin);
        }
        const p50 = summarize(samples.slice(10)).p50;
        results[path]!.push(p50);
        // Let the runs and refills of this round end before the other path's.
        await sleep(2_000);
        const { prepare = 0, create = 0 } = (await counts(origin, true)).calls;
        console.log(
          `[pool-cost] round ${round + 1} ${path}: create p50 ${ms(p50)}, ${prepare} prepares for ${create} creates ` +
            `(load ${loadavg()[0]!.toFixed(1)})`,
        );
      }
    }
    console.log(JSON.stringify({ latency: results, loadavg: loadavg() }));
  });
}

if (process.env.BENCH_POOL_LATENCY) {
  await latencyRounds(Number(process.env.BENCH_POOL_LATENCY));
} else {
  const path = process.env.BENCH_POOL_PATH ?? "/mcp-counted";
  for (const { intervalMs, n } of rates()) {
    const started = new Date().toISOString();
    const { counted, servedPerSecond, create } = await rateRun(intervalMs, n, path);
    console.log(
      JSON.stringify({
        path,
        intervalMs,
        n,
        started,
        loadavg: loadavg(),
        totals: counted,
        perTask: perTask(counted, n),
        createP50Ms: create.p50,
        servedPerSecond,
      }),
    );
  }
}
