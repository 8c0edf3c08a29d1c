// `pnpm bench:catalog-create`: the D1 task catalog on the create path (issue 28, items 2 and 5), over the wire
// against `wrangler dev` with its local D1, interleaved with F (`GET /floor/http`: HTTP → Worker → one warm Durable
// Object call). Every client is a 2025-11-25 session (bench/legacy-session.ts), since per-session lists key on it.
//  1. create p50/p95 of `bench_steps {steps: 1}` on three endpoints with the same tools, in rotating order each round:
//     /mcp (no list: nothing indexed, no catalog), /mcp-session-list ("before": a TaskIndex entry written before each
//     create) and /mcp-catalog ("after": the runner files the catalog row after the reply).
//  2. on /mcp-catalog, the lag from a create's answer until the session's `tasks/list` shows the task (lists sent back
//     to back), beside one `tasks/list` round trip (its least).
//  3. keep-up: BENCH_CATALOG_CLIENTS sessions (default 4) create back to back on /mcp-catalog for BENCH_CATALOG_SECONDS
//     (default 30) while a sampler session creates one task every 500 ms and lists until it shows; by 5 s bucket: the
//     create rate, create p50, the sampler's lag and the load; then how long after the last create every task created
//     is listed (each session's pages read whole).
//   BENCH_PORT (default 8795), BENCH_QUICK=1 (a fifth of the iterations, 10 s of keep-up; summary kept out of docs/)
import { loadavg } from "node:os";
import { now, port, scale, times } from "./common.ts";
import { LegacySession } from "./legacy-session.ts";
import { withServer } from "./server.ts";
import { ms, quantile, ratio, table } from "./stats.ts";
import { load, machine, runSource, writeSummary } from "./summary.ts";

const source = runSource("bench:catalog-create");
const quick = scale < 1;
const ROUNDS = 5;
const CREATES = times(40);
const LAGS = times(20);
const CLIENTS = Number(process.env.BENCH_CATALOG_CLIENTS ?? 4);
const SECONDS = Number(process.env.BENCH_CATALOG_SECONDS ?? (quick ? 10 : 30));
const BUCKET_S = 5;
const SAMPLE_EVERY_MS = 500;
const oneStep = { steps: 1, payloadBytes: 0 };
const sleep = (delayMs: number) => new Promise((resolve) => setTimeout(resolve, delayMs));

const PATHS = [
  { key: "neither", path: "/mcp", label: "/mcp: no list (nothing indexed, no catalog)" },
  { key: "index", path: "/mcp-session-list", label: "/mcp-session-list: TaskIndex on create (before)" },
  { key: "catalog", path: "/mcp-catalog", label: "/mcp-catalog: catalog off the create path (after)" },
] as const;
type PathKey = (typeof PATHS)[number]["key"];

const stats = (samples: number[]) => {
  const sorted = samples.toSorted((a, b) => a - b);
  return { n: sorted.length, p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), max: sorted.at(-1)! };
};

async function floorF(origin: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const begin = now();
    const text = await (await fetch(`${origin}/floor/http`)).text();
    if (text !== "ok") throw new Error(`/floor/http answered ${text}`);
    out.push(now() - begin);
  }
  return out;
}

/** Lists `session`'s first page back to back until it shows `taskId`: [ms since `from`, lists that missed it]. */
async function listedAfter(session: LegacySession, taskId: string, from: number, giveUpMs = 60_000) {
  for (let missed = 0; ; missed++) {
    const { ids } = await session.list();
    if (ids.includes(taskId)) return { lagMs: now() - from, missed };
    if (now() - from > giveUpMs) throw new Error(`task ${taskId} not listed ${giveUpMs} ms after its create`);
  }
}

/** Every id `session`'s list shows, all pages. */
async function listedIds(session: LegacySession): Promise<Set<string>> {
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await session.list(cursor);
    for (const id of page.ids) seen.add(id);
    cursor = page.nextCursor;
  } while (cursor);
  return seen;
}

interface Round {
  load1: number;
  f: number;
  create: Record<PathKey, number[]>;
  listRoundTrip: number[];
  lag: { lagMs: number; missed: number }[];
}

interface KeepUp {
  fBefore: number;
  fAfter: number;
  creates: { at: number; ms: number }[];
  samples: { at: number; lagMs: number; missed: number }[];
  loads: { at: number; load1: number }[];
  total: number;
  allListedAfterMs: number;
}

const loadBefore = loadavg();
const measured = await withServer(port, async (server) => {
  const origin = server.origin;
  await floorF(origin, 20);
  for (const { path } of PATHS) {
    const warm = await LegacySession.open(`${origin}${path}`);
    for (let i = 0; i < 10; i++) await warm.create("bench_steps", oneStep);
  }
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const load1 = loadavg()[0]!;
    const f = quantile(
      (await floorF(origin, times(40))).toSorted((a, b) => a - b),
      0.5,
    );
    const create = { neither: [], index: [], catalog: [] } as Record<PathKey, number[]>;
    // Rotated so that no endpoint always runs first (or right after the floor).
    for (let k = 0; k < PATHS.length; k++) {
      const { key, path } = PATHS[(r + k) % PATHS.length]!;
      const session = await LegacySession.open(`${origin}${path}`);
      await session.create("bench_steps", oneStep);
      for (let i = 0; i < CREATES; i++) {
        const begin = now();
        await session.create("bench_steps", oneStep);
        create[key].push(now() - begin);
      }
    }
    const session = await LegacySession.open(`${origin}/mcp-catalog`);
    const lag: Round["lag"] = [];
    const listRoundTrip: number[] = [];
    for (let i = 0; i < LAGS; i++) {
      const taskId = await session.create("bench_steps", oneStep);
      lag.push(await listedAfter(session, taskId, now()));
      // The least a lag can be: one more list of the same session (the task already in it), once it is filed.
      const begin = now();
      await session.list();
      listRoundTrip.push(now() - begin);
    }
    rounds.push({ load1, f, create, listRoundTrip, lag });
    console.log(
      `[bench] round ${r + 1}/${ROUNDS}: load ${load1.toFixed(2)}, F ${ms(f)}, create p50 ` +
        PATHS.map(({ key }) => `${key} ${ms(stats(create[key]).p50)}`).join(", ") +
        `; lag p50 ${ms(stats(lag.map((l) => l.lagMs)).p50)}`,
    );
  }

  // Keep-up.
  const fBefore = stats(await floorF(origin, times(40))).p50;
  const sessions = await Promise.all(
    Array.from({ length: CLIENTS }, () => LegacySession.open(`${origin}/mcp-catalog`)),
  );
  const sampler = await LegacySession.open(`${origin}/mcp-catalog`);
  const created: string[][] = sessions.map(() => []);
  const creates: KeepUp["creates"] = [];
  const samples: KeepUp["samples"] = [];
  const loads: KeepUp["loads"] = [];
  const start = now();
  const deadline = start + SECONDS * 1000;
  const loadTimer = setInterval(() => loads.push({ at: now() - start, load1: loadavg()[0]! }), BUCKET_S * 1000);
  const clients = sessions.map(async (session, c) => {
    while (now() < deadline) {
      const begin = now();
      created[c]!.push(await session.create("bench_steps", oneStep));
      creates.push({ at: begin - start, ms: now() - begin });
    }
  });
  const sampling = (async () => {
    for (let tick = 1; now() < deadline; tick++) {
      const begin = now();
      const taskId = await sampler.create("bench_steps", oneStep);
      creates.push({ at: begin - start, ms: now() - begin });
      const answered = now();
      samples.push({ at: answered - start, ...(await listedAfter(sampler, taskId, answered)) });
      const wait = start + tick * SAMPLE_EVERY_MS - now();
      if (wait > 0) await sleep(wait);
    }
  })();
  await Promise.all([...clients, sampling]);
  clearInterval(loadTimer);
  const ended = now();
  // Every task the load created, listed: each session's pages read whole until none is missing.
  for (;;) {
    const listed = await Promise.all(sessions.map(listedIds));
    if (created.every((ids, c) => ids.every((id) => listed[c]!.has(id)))) break;
    if (now() - ended > 120_000) throw new Error("keep-up: tasks still unlisted 120 s after the last create");
    await sleep(200);
  }
  const allListedAfterMs = now() - ended;
  const fAfter = stats(await floorF(origin, times(40))).p50;
  const keepUp: KeepUp = {
    fBefore,
    fAfter,
    creates,
    samples,
    loads,
    total: creates.length,
    allListedAfterMs,
  };
  return { rounds, keepUp };
});
const loadAfter = loadavg();

// Section 1: create.
const { rounds, keepUp } = measured;
const all = (pick: (r: Round) => number[]) => rounds.flatMap(pick);
const medianOf = (values: number[]) =>
  quantile(
    values.toSorted((a, b) => a - b),
    0.5,
  );
const perRound = (value: (r: Round) => number) => rounds.map(value);
const fMedian = medianOf(perRound((r) => r.f));
const list = (values: number[], format: (v: number) => string) => values.map(format).join(", ");
const createRows = PATHS.map(({ key, label }) => {
  const s = stats(all((r) => r.create[key]));
  const ratios = perRound((r) => stats(r.create[key]).p50 / r.f);
  return [
    label,
    ms(s.p50),
    ms(s.p95),
    ms(s.max),
    `F ${ms(fMedian)}`,
    ratio(medianOf(ratios)),
    list(
      perRound((r) => stats(r.create[key]).p50),
      ms,
    ),
  ];
});
const pairRatio = (a: PathKey, b: PathKey) => perRound((r) => stats(r.create[a]).p50 / stats(r.create[b]).p50);
const afterOverBefore = pairRatio("catalog", "index");
const beforeOverNeither = pairRatio("index", "neither");
const afterOverNeither = pairRatio("catalog", "neither");
const createTable = [
  ["create (2025-11-25 session, bench_steps 1 step)", "p50", "p95", "max", "floor", "p50 ÷ F", "p50 by round"],
  ...createRows,
  [
    "after ÷ before (catalog ÷ TaskIndex), p50",
    ratio(medianOf(afterOverBefore)),
    "",
    "",
    "",
    "",
    list(afterOverBefore, ratio),
  ],
  ["before ÷ neither, p50", ratio(medianOf(beforeOverNeither)), "", "", "", "", list(beforeOverNeither, ratio)],
  ["after ÷ neither, p50", ratio(medianOf(afterOverNeither)), "", "", "", "", list(afterOverNeither, ratio)],
];

// Section 2: lag.
const lags = all((r) => r.lag.map((l) => l.lagMs));
const lag = stats(lags);
const listTrip = stats(all((r) => r.listRoundTrip));
const missed = all((r) => r.lag.map((l) => l.missed));
const lagTable = [
  ["measure (/mcp-catalog)", "p50", "p95", "max", "floor"],
  [
    "create answered → its session's tasks/list shows it",
    ms(lag.p50),
    ms(lag.p95),
    ms(lag.max),
    `one tasks/list ${ms(listTrip.p50)} p50; F ${ms(fMedian)}`,
  ],
  [
    "one tasks/list round trip (the least a lag can be)",
    ms(listTrip.p50),
    ms(listTrip.p95),
    ms(listTrip.max),
    `F ${ms(fMedian)} → ${ratio(listTrip.p50 / fMedian)}`,
  ],
  [
    "lists sent that did not show it yet",
    `${missed.filter((m) => m === 0).length} of ${missed.length} shown by the first list`,
    "",
    `${Math.max(...missed)} lists`,
    "",
  ],
];

// Section 3: keep-up, by bucket.
const buckets = Math.ceil(SECONDS / BUCKET_S);
const bucketRows: string[][] = [];
for (let b = 0; b < buckets; b++) {
  const from = b * BUCKET_S * 1000;
  const to = from + BUCKET_S * 1000;
  const inBucket = keepUp.creates.filter((c) => c.at >= from && c.at < to);
  const sampled = keepUp.samples.filter((s) => s.at >= from && s.at < to).map((s) => s.lagMs);
  const s = sampled.length ? stats(sampled) : undefined;
  const load1 = keepUp.loads.find((l) => l.at >= to - 1)?.load1 ?? loadAfter[0]!;
  bucketRows.push([
    `${b * BUCKET_S}–${(b + 1) * BUCKET_S} s`,
    (inBucket.length / BUCKET_S).toFixed(1),
    inBucket.length ? ms(stats(inBucket.map((c) => c.ms)).p50) : "—",
    String(sampled.length),
    s ? ms(s.p50) : "—",
    s ? ms(s.p95) : "—",
    s ? ms(s.max) : "—",
    load1.toFixed(2),
  ]);
}
const keepUpTable = [
  ["bucket", "creates/s", "create p50", "lag samples", "lag p50", "lag p95", "lag max", "load (1 min)"],
  ...bucketRows,
];
const rate = keepUp.total / SECONDS;
const sampledAll = stats(keepUp.samples.map((s) => s.lagMs));
const keepUpLine =
  `${CLIENTS} clients + 1 sampler, ${SECONDS} s: ${keepUp.total} creates, ${rate.toFixed(1)} creates/s; ` +
  `create p50 ${ms(stats(keepUp.creates.map((c) => c.ms)).p50)} (F ${ms(keepUp.fBefore)} before, ${ms(keepUp.fAfter)} after); ` +
  `sampled lag p50 ${ms(sampledAll.p50)}, p95 ${ms(sampledAll.p95)}, max ${ms(sampledAll.max)} over ${sampledAll.n} samples; ` +
  `every task created listed ${ms(keepUp.allListedAfterMs)} after the last create`;

const header = `bench:catalog-create, ${source.shortCommit ?? "?"}, load ${load(loadBefore)} → ${load(loadAfter)}`;
console.log(`\n${header}\n`);
console.log(`1. Create, ${ROUNDS} rounds × ${CREATES} creates per endpoint (interleaved with F)\n`);
console.log(table(createTable));
console.log(`\n2. How soon a new task is listed, ${ROUNDS} × ${LAGS} creates\n`);
console.log(table(lagTable));
console.log(`\n3. Keep-up\n`);
console.log(table(keepUpTable));
console.log(`\n${keepUpLine}`);

const markdownTable = (cells: string[][]) =>
  [cells[0]!, cells[0]!.map(() => "---"), ...cells.slice(1)].map((row) => `| ${row.join(" | ")} |`).join("\n");
const markdown = [
  "F is the HTTP floor: `GET /floor/http` (HTTP → Worker → one call to a warm Durable Object), measured at the",
  "start of every round (its median over rounds beside the figures; ratios are the median of each round's own).",
  "Every client is a 2025-11-25 session; the catalog is the local D1 of `wrangler dev` (binding BENCH_CATALOG).",
  "",
  `## 1. Create, ${ROUNDS} rounds × ${CREATES} creates per endpoint, rotating order`,
  "",
  markdownTable(createTable),
  "",
  `Load (1 min) at each round's start: ${list(
    perRound((r) => r.load1),
    (v) => v.toFixed(2),
  )}; F by round: ${list(
    perRound((r) => r.f),
    ms,
  )}.`,
  "",
  `## 2. How soon a new task is listed (/mcp-catalog), ${ROUNDS} × ${LAGS} creates`,
  "",
  markdownTable(lagTable),
  "",
  `## 3. Keep-up: ${CLIENTS} sessions creating back to back on /mcp-catalog for ${SECONDS} s, 1 sampler every ${SAMPLE_EVERY_MS} ms`,
  "",
  markdownTable(keepUpTable),
  "",
  keepUpLine,
  "",
].join("\n");
const written = writeSummary({
  section: "catalog-create",
  quick,
  source,
  machine: machine(),
  loadBefore,
  loadAfter,
  markdown,
  data: { rounds, keepUp, clients: CLIENTS, seconds: SECONDS },
});
console.log(`\n[bench:catalog-create] wrote ${written.markdown} and ${written.json}`);
