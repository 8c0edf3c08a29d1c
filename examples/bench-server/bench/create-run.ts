// `pnpm bench:create`: the create path's rows of issue 15 alone — the two floors, then on /mcp (the library's
// defaults: task event lines at the default level, TASK_INDEX bound but, without authenticate, not written) create, the one-step round trip by polling and
// by listen, and the inline one-step task — in about half a minute, so that builds can be interleaved
// (docs/performance.md, "Create path (issue 15, round 2)"). Appends each run to results/bench-create-history.jsonl.
// workerd CPU (utime + stime of the wrangler dev group's workerd processes) is reported per HTTP-floor request, per
// create + poll cycle, and per create alone (creates back to back, then 2 s for their runs and the pool's refills):
// the figures that do not move with the machine's load (docs/performance.md, "Create path, round 4").
//   BENCH_PORT (default 8795), BENCH_QUICK=1 (a fifth of the iterations), BENCH_LABEL (names the build measured)
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { groupMembers, type McpHttpClient } from "@durable-mcp/test-harness";
import { cpuSeconds } from "./common.ts";
import { benchClient, resultOf } from "./mcp.ts";
import { withServer, workspaceRoot } from "./server.ts";
import { ms, summarize, type Summary } from "./stats.ts";

const port = Number(process.env.BENCH_PORT ?? 8795);
const scale = process.env.BENCH_QUICK === "1" ? 0.2 : 1;
const times = (n: number) => Math.max(1, Math.round(n * scale));
const now = () => performance.now();
const oneStep = { steps: 1, payloadBytes: 0 };

async function samples(n: number, fn: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

async function http(origin: string, path: string, n: number): Promise<Summary> {
  return summarize(
    await samples(n, async () => {
      const begin = now();
      const text = await (await fetch(`${origin}${path}`)).text();
      if (text !== "ok") throw new Error(`${path} answered ${text}`);
      return now() - begin;
    }),
  );
}

/** tools/call → CreateTaskResult, then tasks/get back to back until completed: [create ms, round trip ms]. */
async function createAndPoll(client: McpHttpClient): Promise<[number, number]> {
  const begin = now();
  const taskId = (await client.startTask("bench_steps", oneStep)).taskId;
  const created = now() - begin;
  for (;;) {
    const task = await client.getTask(taskId);
    if (task.status !== "working") {
      resultOf(task);
      return [created, now() - begin];
    }
  }
}

async function createAndListen(client: McpHttpClient): Promise<number> {
  const begin = now();
  const taskId = (await client.startTask("bench_steps", oneStep)).taskId;
  resultOf((await client.listenTasks([taskId])).get(taskId)!.task);
  return now() - begin;
}

let asTask = 0;
async function inline(client: McpHttpClient): Promise<number> {
  const begin = now();
  const answer = await client.call("tools/call", { name: "bench_inline", arguments: oneStep });
  if (answer.resultType === "task") {
    asTask++;
    resultOf((await client.listenTasks([answer.taskId as string])).get(answer.taskId as string)!.task);
  } else if (answer.isError) throw new Error(`bench_inline failed: ${JSON.stringify(answer)}`);
  return now() - begin;
}

const creates: number[] = [];
const loadBefore = loadavg();
const measured = await withServer(port, async (server) => {
  const client = benchClient(`${server.origin}${process.env.BENCH_CREATE_PATH ?? "/mcp"}`);
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  if (workerd.length === 0) throw new Error("no workerd process in the wrangler dev group");
  const cpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid) * 1000, 0);
  /** workerd CPU ms per iteration of what `fn` does `n` times (then waits `settleMs` for work it left running). */
  const cpuPer = async <T>(n: number, fn: () => Promise<T>, settleMs = 0): Promise<[number, T]> => {
    const before = cpu();
    const value = await fn();
    if (settleMs > 0) await new Promise((resolve) => setTimeout(resolve, settleMs));
    return [(cpu() - before) / n, value];
  };
  await http(server.origin, "/floor/http", 50);
  const [floorCpu, httpFloor] = await cpuPer(times(400), () => http(server.origin, "/floor/http", times(400)));
  const newObjectFloor = await http(server.origin, "/floor/http-write", times(150));
  await samples(times(20), async () => (await createAndPoll(client))[1]);
  const [cycleCpu, polled] = await cpuPer(times(200), () =>
    samples(times(200), async () => {
      const [created, total] = await createAndPoll(client);
      creates.push(created);
      return total;
    }),
  );
  const listened = await samples(times(100), () => createAndListen(client));
  await samples(times(20), () => inline(client));
  asTask = 0;
  const inlined = await samples(times(200), () => inline(client));
  const [createCpu] = await cpuPer(
    times(150),
    () =>
      samples(times(150), async () => {
        await client.startTask("bench_steps", oneStep);
        return 0;
      }),
    2_000,
  );
  return {
    cpuMs: { floorRequest: floorCpu, createPollCycle: cycleCpu, create: createCpu },
    httpFloor: httpFloor.p50,
    newObjectFloor: newObjectFloor.p50,
    create: summarize(creates),
    roundTripPolling: summarize(polled),
    roundTripListen: summarize(listened),
    inline: summarize(inlined),
    inlineAsTask: asTask,
  };
});

let commit: string | null = null;
try {
  commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: workspaceRoot, encoding: "utf8" }).trim();
} catch {
  commit = null;
}
const entry = { date: new Date().toISOString(), commit, label: process.env.BENCH_LABEL ?? null, quick: scale < 1 };
const record = { ...entry, loadBefore, loadAfter: loadavg(), ...measured };
mkdirSync(join(workspaceRoot, "results"), { recursive: true });
appendFileSync(join(workspaceRoot, "results", "bench-create-history.jsonl"), `${JSON.stringify(record)}\n`);

const { httpFloor, newObjectFloor } = measured;
const x = (value: number, of: number) => `${(value / of).toFixed(2)}×`;
console.log(`\nCreate path (bench:create) ${entry.label ?? ""} ${entry.date} ${commit ?? "?"}`);
console.log(
  `load ${loadBefore.map((l) => l.toFixed(2)).join(" ")} → ${record.loadAfter.map((l) => l.toFixed(2)).join(" ")}`,
);
console.log(`HTTP floor p50 ${ms(httpFloor)}; new-object floor p50 ${ms(newObjectFloor)}`);
const { cpuMs } = measured;
console.log(
  `workerd CPU: ${ms(cpuMs.floorRequest)} per HTTP-floor request, ${ms(cpuMs.createPollCycle)} per create + poll cycle, ` +
    `${ms(cpuMs.create)} per create alone (with its run and refill; ${x(cpuMs.create, cpuMs.floorRequest)} a floor request)`,
);
const rows: [string, Summary][] = [
  ["create", measured.create],
  ["one-step round trip (polling)", measured.roundTripPolling],
  ["one-step round trip (listen)", measured.roundTripListen],
  [`inline (${measured.inlineAsTask} as a task)`, measured.inline],
];
for (const [name, s] of rows) {
  console.log(
    `${name}: p50 ${ms(s.p50)} p99 ${ms(s.p99)}; ${x(s.p50, httpFloor)} HTTP floor, ${x(s.p50, newObjectFloor)} new-object floor, ` +
      `${x(s.p50, 2 * httpFloor)} (2 × HTTP floor), ${x(s.p50, newObjectFloor + httpFloor)} (new-object + HTTP floor)`,
  );
}
