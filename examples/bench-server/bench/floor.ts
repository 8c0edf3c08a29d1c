// The floor: what the platform itself costs in the same runtime (`/floor/*` routes of the bench server and its
// `Floor` Durable Object), measured from outside like the library's rows.
import { McpHttpClient, type JsonObject } from "@durable-mcp/test-harness";
import type { BenchServer } from "./server.ts";
import { log, repeat, timed, times } from "./common.ts";
import { median, ms, summarize } from "./stats.ts";

export async function httpSamples(origin: string, path: string, n: number): Promise<number[]> {
  return repeat(n, async () => {
    const [elapsed, text] = await timed(async () => (await fetch(`${origin}${path}`)).text());
    if (text !== "ok") throw new Error(`${path} answered ${text}`);
    return elapsed;
  });
}

/**
 * The POST floor: the very request a `tasks/get` is (its headers and its JSON body, sent by the same client),
 * to `/floor/http-post`, which reads and parses the body and makes one call to a warm object. Information beside
 * the HTTP floor (a GET), which the targets are relative to. With `path` and `method`, the same for another floor
 * route and request (`/floor/http-post-write` with a tools/call: a create's least).
 */
export function postFloorClient(
  origin: string,
  path = "/floor/http-post",
  method = "tasks/get",
): (params: JsonObject) => Promise<number> {
  const client = new McpHttpClient(`${origin}${path}`, {
    clientInfo: { name: "durable-mcp-bench", version: "0.1.0" },
  });
  return async (params) => {
    const [elapsed, text] = await timed(async () => (await client.post(method, params)).response.text());
    if (text !== "ok") throw new Error(`${path} answered ${text}`);
    return elapsed;
  };
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return (await response.json()) as T;
}

interface Batch {
  n: number;
  insideMs: number;
}

/**
 * Per-row cost of a batch of `n` INSERTs, two ways: the wall time of the whole call (reply after the commit)
 * minus that of an empty call, from outside; and the loop's own time on workerd's clock, from inside.
 */
export async function insertCost(origin: string, path: string, n: number, bytes: number, reps: number) {
  await getJson(`${origin}${path}?n=${Math.min(n, 10)}&bytes=${bytes}`);
  const empty: number[] = [];
  const full: number[] = [];
  const inside: number[] = [];
  for (let i = 0; i < reps; i++) {
    empty.push((await timed(() => getJson(`${origin}${path}?n=0&bytes=${bytes}`)))[0]);
    const [elapsed, batch] = await timed(() => getJson<Batch>(`${origin}${path}?n=${n}&bytes=${bytes}`));
    full.push(elapsed);
    inside.push(batch.insideMs);
  }
  return {
    n,
    bytes,
    outsideMs: Math.max(0, median(full) - median(empty)) / n,
    insideMs: median(inside) / n,
    emptyCallMs: median(empty),
    fullCallMs: median(full),
  };
}

export async function measureFloor(server: BenchServer, payloads: number[]) {
  const { origin } = server;
  const clock = await getJson<{ dateMs: number; perfMs: number }>(`${origin}/floor/clock?iterations=50000000`);
  log(`clock check: a CPU spin with no I/O moved Date.now() by ${clock.dateMs} ms inside the Durable Object`);

  await httpSamples(origin, "/floor/http", times(50));
  await httpSamples(origin, "/floor/noop", times(50));
  const noop = summarize(await httpSamples(origin, "/floor/noop", times(400)));
  const http = summarize(await httpSamples(origin, "/floor/http", times(400)));
  const httpNew = summarize(await httpSamples(origin, "/floor/http-new", times(150)));
  const httpWrite = summarize(await httpSamples(origin, "/floor/http-write", times(150)));
  log(
    `HTTP p50: Worker only ${ms(noop.p50)}, + 1 DO call ${ms(http.p50)}, + a new DO ${ms(httpNew.p50)}, + a new DO and its first row ${ms(httpWrite.p50)}`,
  );

  const rpcBatches = await repeat(5, async () => {
    const { n, totalMs } = await getJson<{ n: number; totalMs: number }>(`${origin}/floor/rpc?n=${times(1000)}`);
    return totalMs / n;
  });
  const rpc = median(rpcBatches);
  log(`Worker→DO RPC: ${ms(rpc)} each (inside the Worker, median of 5 batches of ${times(1000)})`);

  const alarm = summarize((await getJson<{ times: number[] }>(`${origin}/floor/alarm?n=${times(50)}`)).times);
  log(`alarm dispatch (setAlarm(now) → alarm() runs): ${ms(alarm.p50)} p50`);

  const coalesced = await insertCost(origin, "/floor/insert", times(20_000), 0, 9);
  log(`SQLite INSERT, coalesced: ${ms(coalesced.outsideMs)} (outside), ${ms(coalesced.insideMs)} (inside)`);
  const synced = await insertCost(origin, "/floor/insert-synced", times(300), 0, 3);
  log(`SQLite INSERT + storage.sync(): ${ms(synced.insideMs)} (inside), ${ms(synced.outsideMs)} (outside)`);
  const byPayload = [];
  for (const bytes of payloads.filter((b) => b > 0)) {
    byPayload.push(await insertCost(origin, "/floor/insert", times(100), bytes, 5));
  }
  return {
    clockCheck: clock,
    httpWorkerOnly: noop,
    http,
    httpNewObject: httpNew,
    httpNewObjectFirstRow: httpWrite,
    rpcMs: rpc,
    rpcBatchesMs: rpcBatches,
    alarmDispatch: alarm,
    insertCoalesced: coalesced,
    insertSynced: synced,
    insertCoalescedByPayload: byPayload,
  };
}

export type Floor = Awaited<ReturnType<typeof measureFloor>>;
