// `pnpm bench:steps`: the step engine's rows of the bench (bench/steps.ts) with the two floors measured in the same
// run, and nothing else — about a minute, so that it can be repeated and interleaved with other builds. Prints the
// rows next to the previous run's and appends this run to results/bench-steps-history.jsonl.
//   BENCH_PORT (default 8795), BENCH_QUICK=1 (a fifth of the pairs)
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { benchClient } from "./mcp.ts";
import { withServer, workspaceRoot } from "./server.ts";
import { summarize } from "./stats.ts";
import { measureStepRows, stepRowsTable } from "./steps.ts";

const port = Number(process.env.BENCH_PORT ?? 8795);
const scale = process.env.BENCH_QUICK === "1" ? 0.2 : 1;

async function httpP50(origin: string, path: string, n: number): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const begin = performance.now();
    const text = await (await fetch(`${origin}${path}`)).text();
    if (text !== "ok") throw new Error(`${path} answered ${text}`);
    samples.push(performance.now() - begin);
  }
  return summarize(samples).p50;
}

const loadBefore = loadavg();
const measured = await withServer(port, async (server) => {
  await httpP50(server.origin, "/floor/http", 50);
  const httpFloorMs = await httpP50(server.origin, "/floor/http", Math.round(400 * scale));
  const newObjectFloorMs = await httpP50(server.origin, "/floor/http-write", Math.round(150 * scale));
  const rows = await measureStepRows(benchClient(`${server.origin}/mcp-quiet`), scale);
  return { httpFloorMs, newObjectFloorMs, ...rows };
});

let commit: string | null = null;
try {
  commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: workspaceRoot, encoding: "utf8" }).trim();
} catch {
  commit = null;
}
const entry = {
  date: new Date().toISOString(),
  commit,
  // Names the build measured when runs are interleaved (e.g. before/after a change).
  label: process.env.BENCH_LABEL ?? null,
  quick: scale < 1,
  loadBefore,
  loadAfter: loadavg(),
  ...measured,
};
const dir = join(workspaceRoot, "results");
const history = join(dir, "bench-steps-history.jsonl");
const previous = existsSync(history)
  ? (JSON.parse(readFileSync(history, "utf8").trim().split("\n").at(-1)!) as typeof entry)
  : null;
mkdirSync(dir, { recursive: true });
appendFileSync(history, `${JSON.stringify(entry)}\n`);

console.log(
  `\nStep engine (bench:steps), ${entry.label ?? ""} ${entry.date}, ${commit ?? "?"}, load ${loadBefore.map((l) => l.toFixed(2)).join(" ")}\n`,
);
console.log(stepRowsTable(entry, previous));
console.log(`\n[bench:steps] appended to ${history}`);
