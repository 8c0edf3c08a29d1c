// `pnpm bench:table`: the performance table of docs/performance.md (issue 32) — every row against a named floor
// measured in the same round (bench/table.ts), no round dropped, then the peak V8 heap of a 10,000-step task read
// through the inspector (bench/heap.ts) — printed, and written as a dated summary to docs/bench-results/ (the commit,
// the command, the machine, the load, every round's figures; bench/summary.ts) for the docs to cite.
//   BENCH_PORT (default 8795; it and it + 1000 must be free), BENCH_QUICK=1 (2 short rounds, a try-out: its summary
//   goes to results/bench-results/), BENCH_TABLE_ROUNDS (default 5), BENCH_TABLE_MEMORY_RUNS (default 3; 0 skips)
import { loadavg } from "node:os";
import { log, port, scale } from "./common.ts";
import { heapPeakDuring, ISOLATE_LIMIT_BYTES, mb, type HeapPeak } from "./heap.ts";
import { benchClient, resultOf } from "./mcp.ts";
import { withServer } from "./server.ts";
import { median, ms, ratio, table } from "./stats.ts";
import { load, machine, runSource, writeSummary } from "./summary.ts";
import { FULL_SIZES, measureTable, QUICK_SIZES, type TableRound } from "./table.ts";

const quick = scale < 1;
const sizes = { ...(quick ? QUICK_SIZES : FULL_SIZES) };
if (process.env.BENCH_TABLE_ROUNDS) sizes.rounds = Number(process.env.BENCH_TABLE_ROUNDS);
const memoryRuns = Number(process.env.BENCH_TABLE_MEMORY_RUNS ?? (quick ? 1 : 3));
const source = runSource("bench:table");
const loadBefore = loadavg();
log(`bench:table on 127.0.0.1:${port}, ${sizes.rounds} rounds of ${sizes.perBlock}; load ${load(loadBefore)}`);

type MemoryRun = Omit<HeapPeak<unknown>, "value"> & { loadavg: number[]; steps: number };

const measured = await withServer(port, async (server) => {
  const rounds = await measureTable(server, sizes);
  const memory: MemoryRun[] = [];
  const client = benchClient(`${server.origin}/mcp`);
  for (let run = 0; run < memoryRuns; run++) {
    const at = loadavg();
    const { value: _, ...peak } = await heapPeakDuring(server, async () => {
      const taskId = (await client.startTask("bench_steps", { steps: 10_000, payloadBytes: 0 })).taskId;
      resultOf((await client.listenTasks([taskId])).get(taskId)!.task);
    });
    memory.push({ ...peak, loadavg: at, steps: 10_000 });
    log(
      `memory run ${run + 1}: V8 heap ${mb(peak.baselineUsedBytes)} after GC → peak ${mb(peak.peakUsedBytes)} used, ` +
        `${mb(peak.peakTotalBytes)} total (${peak.samples} samples, longest gap ${ms(peak.longestGapMs)}) → ` +
        `${mb(peak.afterUsedBytes)} after GC`,
    );
  }
  return { rounds, memory };
});
const loadAfter = loadavg();

const { rounds, memory } = measured;
const of = (pick: (r: TableRound) => number) => rounds.map(pick);
/** The served share over the rounds whose counters saw every create, and which rounds lost theirs. */
function servedShare(): string {
  const whole = rounds.filter((r) => r.warm.creates === r.warm.planned);
  const lost = rounds.filter((r) => r.warm.creates !== r.warm.planned);
  const share = whole.length > 0 ? `${(median(whole.map((r) => r.warm.served)) * 100).toFixed(0)} % served` : "";
  const note = lost.map((r) => `round ${r.round + 1}: ${r.warm.creates} of ${r.warm.planned} counted`).join(", ");
  return [share, note && `counts lost (the Worker reloaded mid-block; ${note})`].filter(Boolean).join("; ");
}
const mid = (pick: (r: TableRound) => number) => median(of(pick));
const list = (values: number[], format: (v: number) => string) => values.map(format).join(", ");
const steps = (stepsPerSecond: number) => `${Math.round(stepsPerSecond).toLocaleString("en-US")} steps/s`;
const µs = (valueMs: number) => `${(valueMs * 1000).toFixed(1)} µs`;
const yes = (met: boolean) => (met ? "yes" : "**no**");

interface Row {
  row: string;
  measured: string;
  floor: string;
  ratio: string;
  target: string;
  met: string;
  rounds: string;
}

/** A row judged by the median of its rounds' own ratios, each round's figure over the floor of that round. */
function relative(
  row: string,
  value: (r: TableRound) => number,
  floorName: string,
  floor: (r: TableRound) => number,
  bound: number,
): Row {
  const ratios = of((r) => value(r) / floor(r));
  const middle = median(ratios);
  return {
    row,
    measured: `${ms(mid(value))} p50`,
    floor: `${floorName} ${ms(mid(floor))}`,
    ratio: ratio(middle),
    target: `≤ ${bound}×`,
    met: yes(middle <= bound),
    rounds: list(ratios, ratio),
  };
}

const perStepRow = (name: string, pick: (r: TableRound) => number): Row => ({
  row: name,
  measured: µs(mid(pick)),
  floor: "— (a bound)",
  ratio: "",
  target: "≤ 10 µs",
  met: yes(mid(pick) >= 0 && mid(pick) <= 0.01),
  rounds: list(of(pick), µs),
});

const worstGet = Math.max(...of((r) => r.getWait.worstMs));
const commitsPerSecond = (r: TableRound) => 1000 / r.syncedCommitMs;
const parallelRatios = of((r) => r.parallel.stepsPerSecond / commitsPerSecond(r));
const peakUsed = memory.length > 0 ? Math.max(...memory.map((m) => m.peakUsedBytes)) : null;
const peakTotal = memory.length > 0 ? Math.max(...memory.map((m) => m.peakTotalBytes)) : null;

const rows: Row[] = [
  relative(
    "create p50, `/mcp` (defaults; pre-created runners serve back-to-back creates)",
    (r) => r.create,
    "F",
    (r) => r.httpFloor,
    1.5,
  ),
  relative(
    "create p50, `/mcp`, against the new-object floor",
    (r) => r.create,
    "new object + row",
    (r) => r.newObjectFloor,
    1.2,
  ),
  relative(
    "  create p50 without the TaskIndex write (`/mcp-counted`: pool, no index, as with a catalog bound)",
    (r) => r.pool.create,
    "F",
    (r) => r.httpFloor,
    1.5,
  ),
  {
    ...relative(
      "  create p50 against the least a committed create can be (information)",
      (r) => r.create,
      "POST + 1 committed row",
      (r) => r.postWriteFloor,
      1.5,
    ),
    target: "—",
    met: "",
  },
  {
    row: "the pool's gain: create p50 without ÷ with pre-created runners (`/mcp-counted[-nopool]`)",
    measured: `${ms(mid((r) => r.pool.create))} with, ${ms(mid((r) => r.pool.createNoPool))} without`,
    floor: "the same endpoint without the pool",
    ratio: ratio(median(of((r) => r.pool.createNoPool / r.pool.create))),
    target: "— (information)",
    met: "",
    rounds: list(
      of((r) => r.pool.createNoPool / r.pool.create),
      ratio,
    ),
  },
  {
    row: "the pool's cost per create: prepares; objects; rows written (with / without)",
    measured: list(
      [
        median(of((r) => r.pool.pool.prepares / r.pool.pool.creates)),
        median(of((r) => r.pool.pool.objects / r.pool.pool.creates)),
        median(of((r) => r.pool.pool.rowsWritten / r.pool.pool.creates)),
      ],
      (v) => v.toFixed(2),
    ),
    floor: `without: ${list(
      [
        median(of((r) => r.pool.noPool.prepares / r.pool.noPool.creates)),
        median(of((r) => r.pool.noPool.objects / r.pool.noPool.creates)),
        median(of((r) => r.pool.noPool.rowsWritten / r.pool.noPool.creates)),
      ],
      (v) => v.toFixed(2),
    )}`,
    ratio: "",
    target: "— (information)",
    met: "",
    rounds: list(
      of((r) => r.pool.pool.prepares / r.pool.pool.creates),
      (v) => `${v.toFixed(2)} prepares`,
    ),
  },
  relative(
    "create p50 where a warm pre-created runner serves it (`/mcp`, paced: 60 ms after each task), against F paced the same",
    (r) => r.warm.create,
    "paced F",
    (r) => r.warm.httpFloor,
    1.5,
  ),
  {
    ...relative(
      "  the same without the TaskIndex write (`/mcp-counted`, as with a catalog bound); share served by a prepared runner",
      (r) => r.warm.createNoIndex,
      "paced F",
      (r) => r.warm.httpFloor,
      1.5,
    ),
    measured: `${ms(mid((r) => r.warm.createNoIndex))} p50; ${servedShare()}`,
  },
  {
    ...relative(
      "`tasks/get` p50, completed task",
      (r) => r.get,
      "POST floor",
      (r) => r.postFloor,
      1.1,
    ),
  },
  {
    row: "  the same gets against F (information)",
    measured: `${ms(mid((r) => r.get))} p50`,
    floor: `F ${ms(mid((r) => r.httpFloor))}; POST floor ${ms(mid((r) => r.postFloor))} = ${ratio(median(of((r) => r.postFloor / r.httpFloor)))} F`,
    ratio: ratio(median(of((r) => r.get / r.httpFloor))),
    target: "—",
    met: "",
    rounds: list(
      of((r) => r.get / r.httpFloor),
      ratio,
    ),
  },
  {
    ...relative(
      "one-step round trip p50 (create, then tasks/get until completed)",
      (r) => r.roundTripPolling,
      "F",
      (r) => r.httpFloor,
      3.25,
    ),
    measured: `${ms(mid((r) => r.roundTripPolling))} p50; ${median(of((r) => r.getsPerTrip)).toFixed(2)} gets per trip`,
  },
  {
    ...relative(
      "  the same where a warm pre-created runner serves the create (`/mcp`, paced as above), against F paced the same",
      (r) => r.warm.roundTrip,
      "paced F",
      (r) => r.warm.httpFloor,
      3.25,
    ),
    measured: `${ms(mid((r) => r.warm.roundTrip))} p50; ${median(of((r) => r.warm.getsPerTrip)).toFixed(2)} gets per trip`,
  },
  {
    ...relative(
      "  round trip against the least: POST + 1 committed row, then one POST floor (information)",
      (r) => r.roundTripPolling,
      "their sum",
      (r) => r.postWriteFloor + r.postFloor,
      1.3,
    ),
    target: "—",
    met: "",
  },
  {
    ...relative(
      "  the same task with an inline result (`bench_inline`, 50 ms budget: tools/call → the result; information)",
      (r) => r.inline.p50,
      "F",
      (r) => r.httpFloor,
      3.25,
    ),
    measured: `${ms(mid((r) => r.inline.p50))} p50; ${of((r) => r.inline.asTask).reduce((a, b) => a + b, 0)} of ${rounds.length * sizes.perBlock} came back as a task`,
    target: "—",
    met: "",
  },
  perStepRow("per step, 2,000 steps vs 1 (paired)", (r) => r.perStep2000Ms),
  perStepRow("per step, 10,000 steps vs 1 (paired)", (r) => r.perStep10000Ms),
  {
    row: "worst wait of every `tasks/get` behind a 10,000-step run (first and last included)",
    measured: ms(worstGet),
    floor: "— (a bound)",
    ratio: "",
    target: "≤ 50 ms",
    met: yes(worstGet <= 50),
    rounds: rounds
      .map(
        (r) =>
          `${ms(r.getWait.worstMs)} of ${r.getWait.gets} gets (worst first ${ms(r.getWait.firstMs)}, worst last ${ms(r.getWait.lastMs)})`,
      )
      .join("; "),
  },
  {
    row: "20 tasks × 50 steps, journal clock (first step start → last step end, all tasks)",
    measured: steps(mid((r) => r.parallel.stepsPerSecond)),
    floor: `synced commits (INSERT + awaited sync) ${Math.round(median(of(commitsPerSecond))).toLocaleString("en-US")}/s`,
    ratio: `${median(parallelRatios).toFixed(1)}× the commit rate`,
    target: "— (a ratio; deployed: on paper)",
    met: "",
    rounds: rounds
      .map(
        (r, i) =>
          `${list(
            r.parallel.runs.map((run) => run.stepsPerSecond),
            (v) => Math.round(v).toLocaleString("en-US"),
          )} (${parallelRatios[i]!.toFixed(1)}×)`,
      )
      .join("; "),
  },
  ...(peakUsed !== null && peakTotal !== null
    ? [
        {
          row: "peak V8 heap of the isolate while a 10,000-step task runs (`/mcp`)",
          measured: `${mb(peakUsed)} used, ${mb(peakTotal)} total`,
          floor: `after GC before: ${list(
            memory.map((m) => m.baselineUsedBytes / 1e6),
            (v) => v.toFixed(1),
          )} MB`,
          ratio: `${((peakTotal / ISOLATE_LIMIT_BYTES) * 100).toFixed(0)} % of 128 MB`,
          target: "≤ 128 MB",
          met: yes(peakTotal <= ISOLATE_LIMIT_BYTES),
          rounds: memory
            .map(
              (m) =>
                `${mb(m.peakUsedBytes)}/${mb(m.peakTotalBytes)} (${m.samples} samples, gap ≤ ${ms(m.longestGapMs)})`,
            )
            .join("; "),
        },
      ]
    : []),
];

const headline = table([
  ["row", "measured (median of rounds)", "floor, same run", "ratio", "target", "met", "every round"],
  ...rows.map((r) => [r.row, r.measured, r.floor, r.ratio, r.target, r.met, r.rounds]),
]);
console.log(
  `\nPerformance table (bench:table), ${source.shortCommit ?? "?"}, load ${load(loadBefore)} → ${load(loadAfter)}\n`,
);
console.log(headline);

const markdownTable = (cells: string[][]) =>
  [cells[0]!, cells[0]!.map(() => "---"), ...cells.slice(1)].map((row) => `| ${row.join(" | ")} |`).join("\n");
const perRound = markdownTable([
  [
    "round",
    "load (1 min)",
    "F",
    "POST floor",
    "new object",
    "POST + commit",
    "create",
    "round trip",
    "warm create / trip / paced F",
    "get",
    "pool / none",
    "prepares",
    "per step 2k / 10k",
    "worst get",
    "20×50 steps/s",
    "synced commit",
  ],
  ...rounds.map((r) => [
    String(r.round + 1),
    r.loadavg[0]!.toFixed(2),
    ms(r.httpFloor),
    ms(r.postFloor),
    ms(r.newObjectFloor),
    ms(r.postWriteFloor),
    ms(r.create),
    ms(r.roundTripPolling),
    `${ms(r.warm.create)} / ${ms(r.warm.roundTrip)} / ${ms(r.warm.httpFloor)}`,
    ms(r.get),
    `${ms(r.pool.create)} / ${ms(r.pool.createNoPool)} (${r.pool.first} first)`,
    `${r.pool.pool.prepares}/${r.pool.pool.creates}`,
    `${µs(r.perStep2000Ms)} / ${µs(r.perStep10000Ms)}`,
    ms(r.getWait.worstMs),
    list(
      r.parallel.runs.map((run) => run.stepsPerSecond),
      (v) => Math.round(v).toLocaleString("en-US"),
    ),
    ms(r.syncedCommitMs),
  ]),
]);
const markdown = [
  "## The table",
  "",
  `F is the HTTP floor: \`GET /floor/http\` (HTTP → Worker → one call to a warm Durable Object). Each ratio is the`,
  `median of the rounds' own ratios, each round's figure over the floor measured in that round; every round is in`,
  `the last column and below. Sizes: ${JSON.stringify(sizes)}.`,
  "",
  markdownTable([
    ["row", "measured (median of rounds)", "floor, same run", "ratio", "target", "met", "every round"],
    ...rows.map((r) => [r.row, r.measured, r.floor, r.ratio, r.target, r.met, r.rounds]),
  ]),
  "",
  "## Every round (p50s)",
  "",
  perRound,
  "",
].join("\n");
const written = writeSummary({
  section: "table",
  quick,
  source,
  machine: machine(),
  loadBefore,
  loadAfter,
  markdown,
  data: { sizes, rounds, memory, rows },
});
console.log(`\n[bench:table] wrote ${written.markdown} and ${written.json}`);
