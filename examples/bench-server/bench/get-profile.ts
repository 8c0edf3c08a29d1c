// `pnpm bench:get`: where a tasks/get's time goes between the HTTP floor (GET /floor/http: HTTP → Worker → one RPC
// to a warm object) and the answer. The same request is sent in steps that each add one thing — the MCP headers,
// the POST and its JSON body, reading and parsing the body, then the library's tasks/get — interleaved round by
// round so that drift in the machine's load falls on all alike. Beside the client's p50, the Worker's own time per
// request (a Server-Timing header the bench server adds when asked; workerd's clock moves in whole milliseconds
// locally, so only its mean over many requests means something), and the CPU time the two workerd processes of
// `wrangler dev` spent per request (utime + stime from /proc, read around each batch): on a shared machine that is
// the figure the neighbours' load does not move, where wall-clock p50s do.
//   BENCH_PORT (default 8795), BENCH_QUICK=1 (a fifth of the rounds), BENCH_LABEL (names the build in the history)
import { loadavg } from "node:os";
import { groupMembers, McpHttpClient } from "@durable-mcp/test-harness";
import { cpuSeconds, log, now, port, times } from "./common.ts";
import { History, runHeader, type RunHeader } from "./history.ts";
import { benchClient } from "./mcp.ts";
import { withServer } from "./server.ts";
import { ms, summarize, table } from "./stats.ts";

interface Variant {
  name: string;
  path: string;
  method: "GET" | "POST";
  mcpHeaders: boolean;
  body: boolean;
}

const variants: Variant[] = [
  { name: "GET /floor/http (the HTTP floor)", path: "/floor/http", method: "GET", mcpHeaders: false, body: false },
  { name: "+ the MCP headers of a tasks/get", path: "/floor/http", method: "GET", mcpHeaders: true, body: false },
  { name: "+ POST with its JSON body (unread)", path: "/floor/http", method: "POST", mcpHeaders: true, body: true },
  {
    name: "+ the body read and parsed (POST floor)",
    path: "/floor/http-post",
    method: "POST",
    mcpHeaders: true,
    body: true,
  },
  {
    name: "+ an answer as long as a tasks/get's",
    path: "/floor/http-post?answerBytes=",
    method: "POST",
    mcpHeaders: true,
    body: true,
  },
  {
    name: "GET /floor/runner-get, another principal (no view built)",
    path: "/floor/runner-get?principal=nobody",
    method: "GET",
    mcpHeaders: false,
    body: false,
  },
  {
    name: "GET /floor/runner-get: the TaskRunner's get RPC alone",
    path: "/floor/runner-get",
    method: "GET",
    mcpHeaders: false,
    body: false,
  },
  {
    name: "POST floor + the runner's answer, no checks (the least a tasks/get can be)",
    path: "/floor/runner-get-post",
    method: "POST",
    mcpHeaders: true,
    body: true,
  },
  { name: "tasks/get on /mcp-quiet", path: "/mcp-quiet", method: "POST", mcpHeaders: true, body: true },
  { name: "tasks/get on /mcp (defaults)", path: "/mcp", method: "POST", mcpHeaders: true, body: true },
];

export interface ProfileRow {
  name: string;
  p50: number;
  mean: number;
  workerMeanMs: number;
  /** CPU time of the workerd processes per request (µs), over all of the variant's batches. */
  workerdCpuUs?: number;
}

const loadBefore = loadavg();
const rows = await withServer(port, async (server) => {
  // A completed task on each endpoint, and the exact headers and body the client sends for its tasks/get.
  const tasks: Record<string, string> = {};
  const captured: Record<string, { headers: Record<string, string>; body: string }> = {};
  for (const path of ["/mcp-quiet", "/mcp"]) {
    const client = benchClient(`${server.origin}${path}`);
    const taskId = (await client.startTask("bench_steps", { steps: 1, payloadBytes: 100 })).taskId;
    await client.listenTasks([taskId]);
    tasks[path] = taskId;
    const probe = new McpHttpClient(client.url, {
      clientInfo: client.clientInfo,
      onExchange: (exchange) => (captured[path] = exchange.request),
    });
    await probe.getTask(taskId);
  }
  // How long a tasks/get's answer is, for the POST floor that answers as many bytes.
  const answerBytes = Buffer.byteLength(
    await (
      await fetch(`${server.origin}/mcp-quiet`, {
        method: "POST",
        headers: captured["/mcp-quiet"]!.headers,
        body: captured["/mcp-quiet"]!.body,
      })
    ).text(),
  );
  const request = (variant: Variant) => {
    const sent = captured[variant.path === "/mcp" ? "/mcp" : "/mcp-quiet"]!;
    const headers: Record<string, string> = { "x-bench-timing": "1" };
    if (variant.mcpHeaders) Object.assign(headers, sent.headers);
    if (!variant.body) delete headers["content-type"];
    return { method: variant.method, headers, body: variant.body ? sent.body : undefined };
  };
  const once = async (variant: Variant): Promise<[number, number]> => {
    const init = request(variant);
    const begin = now();
    const query =
      variant.path.startsWith("/floor/runner-get") && variant.path !== "/floor/runner-get-post"
        ? `taskId=${tasks["/mcp-quiet"]}`
        : "";
    const path = variant.path.endsWith("answerBytes=") ? `${variant.path}${answerBytes}` : variant.path;
    const url = `${server.origin}${path}${query ? (path.includes("?") ? "&" : "?") + query : ""}`;
    const response = await fetch(url, init);
    const text = await response.text();
    const elapsed = now() - begin;
    const answers = !variant.path.startsWith("/floor/") || variant.path === "/floor/runner-get-post";
    const expected = path === variant.path ? text === "ok" : Buffer.byteLength(text) === answerBytes;
    if (!response.ok || (answers ? !text.includes('"completed"') : !expected)) {
      throw new Error(`${variant.name}: HTTP ${response.status} ${text.slice(0, 200)}`);
    }
    const worker = /dur=([\d.]+)/.exec(response.headers.get("server-timing") ?? "")?.[1];
    return [elapsed, Number(worker ?? NaN)];
  };
  const workerd = groupMembers(server.pgid!).filter((member) => member.comm === "workerd");
  if (workerd.length === 0) throw new Error("no workerd process in the wrangler dev group");
  const workerdCpu = () => workerd.reduce((sum, member) => sum + cpuSeconds(member.pid), 0);
  const samples = variants.map(() => ({ client: [] as number[], worker: [] as number[], cpu: 0 }));
  const rounds = times(20);
  const perRound = 40;
  for (let round = -2; round < rounds; round++) {
    for (const [i, variant] of variants.entries()) {
      const cpuBefore = workerdCpu();
      for (let k = 0; k < perRound; k++) {
        const [elapsed, worker] = await once(variant);
        if (round < 0) continue; // warm-up
        samples[i]!.client.push(elapsed);
        samples[i]!.worker.push(worker);
      }
      if (round >= 0) samples[i]!.cpu += workerdCpu() - cpuBefore;
    }
  }
  log(`${rounds} interleaved rounds of ${perRound} requests per variant`);
  return variants.map((variant, i): ProfileRow => {
    const summary = summarize(samples[i]!.client);
    const worker = samples[i]!.worker;
    return {
      name: variant.name,
      p50: summary.p50,
      mean: summary.mean,
      workerMeanMs: worker.reduce((a, b) => a + b, 0) / worker.length,
      workerdCpuUs: (samples[i]!.cpu * 1e6) / worker.length,
    };
  });
});

type Entry = RunHeader & { rows: ProfileRow[] };
const history = new History<Entry>("bench-get-history.jsonl");
const previous = history.previous();
const entry: Entry = { ...runHeader(loadBefore, times(20) < 20), rows };
history.append(entry);
const floor = rows[0]!.p50;
const before = new Map((previous?.rows ?? []).map((row) => [row.name, row]));
console.log(
  `\ntasks/get between the floors (bench:get), ${entry.label ?? ""} ${entry.commit ?? "?"}, load ${loadBefore.map((l) => l.toFixed(2)).join(" ")} → ${entry.loadAfter.map((l) => l.toFixed(2)).join(" ")}\n`,
);
console.log(
  table([
    [
      "request",
      "p50",
      "× HTTP floor",
      "mean",
      "Worker's own time (mean)",
      "workerd CPU",
      "× floor's",
      "previous run p50",
    ],
    ...rows.map((row) => [
      row.name,
      ms(row.p50),
      `${(row.p50 / floor).toFixed(2)}×`,
      ms(row.mean),
      ms(row.workerMeanMs),
      row.workerdCpuUs === undefined ? "—" : `${Math.round(row.workerdCpuUs)} µs`,
      row.workerdCpuUs === undefined ? "—" : `${(row.workerdCpuUs / rows[0]!.workerdCpuUs!).toFixed(2)}×`,
      previous ? (before.has(row.name) ? ms(before.get(row.name)!.p50) : "—") : "no previous run",
    ]),
  ]),
);
console.log(`\n[bench:get] appended to ${history.file}`);
