// The upload row of the bench (issue 32): what a user's stopwatch says. A tus upload by tus-js-client (its own Node
// HTTP stack, one PATCH per chunk, one at a time, from a Buffer in memory) against a raw put of the same bytes
// through the same Worker: one `PUT /floor/r2-put` (node:http, Content-Length, the body piped natively into one R2
// put(): no library, no hashing, no multipart, one request). Both are client wall time, from the first byte asked
// for to the last answer (the tus upload's includes its POST and the completion in its last PATCH). Interleaved:
// each round does every chunk size, and within a pair the raw put goes first in even rounds and second in odd ones.
// Beside the time, the CPU the server's workerd processes spent on each transfer (utime + stime from /proc, both
// of wrangler dev's processes: its proxy and the runtime; one process runs the Worker and every Durable Object, so
// the figure is the Worker's and the FileRunner's CPU together).
// Two more floors say what chunking itself costs, whatever the server does with a chunk: "chunked puts" sends the
// same bytes as one PUT per chunk, one at a time like tus-js-client, each piped by the Worker into an R2 object of
// its own (a request and a durable write per chunk, and no assembly into one object: less than any upload that ends
// as one object can do); "multipart" (chunks of at least 5 MiB, R2's least part) sends each chunk as one part of one
// multipart upload, then completes it — the least a chunked upload into one R2 object costs; "routed" sends the same
// parts through one Durable Object that reads each into one buffer, feeds it to a SHA-256 it keeps across parts and
// sends it as the part — the least an upload can cost that keeps the whole file's native digest across PATCHes in
// an object, as the library does (no lease, no record, no check, no resume).
import { execFileSync } from "node:child_process";
import { createHash, randomFillSync } from "node:crypto";
import { request } from "node:http";
import * as tus from "tus-js-client";
import { median, ratio } from "./stats.ts";
import type { TargetRow } from "./targets.ts";

export const MIB = 1024 * 1024;
const TUS = { "Tus-Resumable": "1.0.0" };

export interface UploadPair {
  round: number;
  chunkMiB: number;
  /** The order the transfers ran in, this round: "put", "tus", "chunked", "multipart", "routed". */
  order: string[];
  rawPutFirst: boolean;
  rawPutMs: number;
  uploadMs: number;
  /** The chunked floors; multipart and routed are null below R2's 5 MiB least part. */
  chunkedMs: number;
  multipartMs: number | null;
  routedMs: number | null;
  /** Server CPU seconds of each transfer, when measured. */
  rawPutCpu: number | null;
  uploadCpu: number | null;
  chunkedCpu: number | null;
  multipartCpu: number | null;
  routedCpu: number | null;
}

/** R2's least part (all but the last): the multipart floor runs from this chunk size up. */
const MIN_PART_MIB = 5;

export interface UploadMeasurement {
  sizeBytes: number;
  chunkMiBs: number[];
  pairs: UploadPair[];
  rows: TargetRow[];
}

/** Sizes and chunks from the environment: BENCH_UPLOAD_MIB (1024; 256 with BENCH_QUICK=1), BENCH_UPLOAD_CHUNKS. */
export function uploadSettings(): { sizeBytes: number; chunkMiBs: number[]; rounds: number } {
  const quick = process.env.BENCH_QUICK === "1";
  const mib = Number(process.env.BENCH_UPLOAD_MIB ?? (quick ? 256 : 1024));
  const chunkMiBs = (process.env.BENCH_UPLOAD_CHUNKS ?? "1,5,50").split(",").map(Number);
  const rounds = Number(process.env.BENCH_UPLOAD_ROUNDS ?? 3);
  if (!(mib > 0) || chunkMiBs.some((c) => !(c > 0)) || !(rounds >= 0)) throw new Error("bad BENCH_UPLOAD_* setting");
  return { sizeBytes: Math.round(mib * MIB), chunkMiBs, rounds };
}

/** One request with node:http (the stack tus-js-client uses in Node); the answer's body as text. */
function send(method: string, url: string, body?: Uint8Array | string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { "Content-Length": String(Buffer.byteLength(body)) };
    const req = request(url, { method, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function sendOk(method: string, url: string, body?: Uint8Array | string): Promise<string> {
  const answer = await send(method, url, body);
  if (answer.status < 200 || answer.status > 299)
    throw new Error(`${method} ${url}: HTTP ${answer.status} ${answer.text}`);
  return answer.text;
}

/** One PUT of `bytes` to the raw-put floor; ms to the answer, and the stored object's key. */
export async function rawPut(origin: string, bytes: Buffer): Promise<{ ms: number; key: string }> {
  const started = performance.now();
  const answer = await sendOk("PUT", `${origin}/floor/r2-put?size=${bytes.byteLength}`, bytes);
  return { ms: performance.now() - started, key: (JSON.parse(answer) as { key: string }).key };
}

/** The chunked-puts floor: one PUT per chunk, one at a time, each into an object of its own. */
async function chunkedPuts(origin: string, bytes: Buffer, chunkBytes: number): Promise<{ ms: number; run: string }> {
  const run = `c${Date.now()}${Math.floor(Math.random() * 1e6)}`;
  const started = performance.now();
  for (let at = 0, index = 0; at < bytes.byteLength; at += chunkBytes, index++) {
    const chunk = bytes.subarray(at, Math.min(at + chunkBytes, bytes.byteLength));
    await sendOk("PUT", `${origin}/floor/chunk-put?run=${run}&index=${index}&size=${chunk.byteLength}`, chunk);
  }
  return { ms: performance.now() - started, run };
}

/**
 * The multipart floor: a multipart upload started, one part per chunk, one at a time, completed. `routed`: the parts
 * and the completion go through one Floor object that keeps the upload's SHA-256, which must equal `sha256`.
 */
async function multipartPuts(
  origin: string,
  bytes: Buffer,
  chunkBytes: number,
  routed?: { sha256: string },
): Promise<{ ms: number; key: string }> {
  const key = `floor/multipart-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const started = performance.now();
  const { uploadId } = JSON.parse(await sendOk("POST", `${origin}/floor/multipart?key=${key}`)) as { uploadId: string };
  const route = routed ? "routed-multipart" : "multipart";
  const at = `${origin}/floor/${route}?key=${key}&uploadId=${encodeURIComponent(uploadId)}`;
  const parts: unknown[] = [];
  for (let offset = 0, part = 1; offset < bytes.byteLength; offset += chunkBytes, part++) {
    const chunk = bytes.subarray(offset, Math.min(offset + chunkBytes, bytes.byteLength));
    parts.push(JSON.parse(await sendOk("PUT", `${at}&part=${part}&size=${chunk.byteLength}`, chunk)));
  }
  const completed = JSON.parse(await sendOk("POST", `${at}&complete=1`, JSON.stringify(parts))) as {
    size: number;
    sha256?: string;
  };
  if (completed.size !== bytes.byteLength) {
    throw new Error(`${route} floor: stored ${completed.size} of ${bytes.byteLength} bytes`);
  }
  if (routed && completed.sha256 !== routed.sha256) throw new Error(`${route} floor: its SHA-256 is not the file's`);
  return { ms: performance.now() - started, key };
}

/** `sizeBytes` random bytes and their SHA-256 (hex), the file every transfer sends. */
export function randomFile(sizeBytes: number): { bytes: Buffer; sha256: string } {
  const bytes = Buffer.allocUnsafe(sizeBytes);
  for (let at = 0; at < sizeBytes; at += 64 * 1024) randomFillSync(bytes, at, Math.min(64 * 1024, sizeBytes - at));
  return { bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** Removes a finished tus upload's file. */
export async function deleteUpload(url: string): Promise<void> {
  await expectStatus(await fetch(url, { method: "DELETE", headers: TUS }), 204, "upload cleanup");
}

/** tus-js-client from start() to onSuccess; no retries (a failure fails the bench). */
export function tusUpload(origin: string, bytes: Buffer, sha256: string, chunkBytes: number) {
  const started = performance.now();
  return new Promise<{ ms: number; url: string }>((resolve, reject) => {
    const upload = new tus.Upload(bytes, {
      endpoint: `${origin}/files`,
      uploadSize: bytes.byteLength,
      chunkSize: chunkBytes,
      metadata: { filename: "bench.bin", filetype: "application/octet-stream", sha256 },
      retryDelays: null,
      storeFingerprintForResuming: false,
      onSuccess: () => resolve({ ms: performance.now() - started, url: upload.url! }),
      onError: reject,
    });
    upload.start();
  });
}

async function deleteFloorObject(origin: string, key: string): Promise<void> {
  await sendOk("DELETE", `${origin}/floor/r2-put?key=${encodeURIComponent(key)}`);
}

async function expectStatus(response: Response, status: number, what: string): Promise<void> {
  const text = await response.text();
  if (response.status !== status) throw new Error(`${what}: HTTP ${response.status} ${text}`);
}

/**
 * Rounds × chunk sizes of (raw put, tus upload) pairs of `sizeBytes` random bytes. `cpuSeconds`, when given, reads
 * the server's CPU time so far.
 */
export async function measureUploads(
  origin: string,
  settings: { sizeBytes: number; chunkMiBs: number[]; rounds: number },
  log: (message: string) => void,
  cpuSeconds?: () => number,
): Promise<UploadMeasurement> {
  const { sizeBytes, chunkMiBs, rounds } = settings;
  const { bytes, sha256 } = randomFile(sizeBytes);
  const cpuOf = async <T>(fn: () => Promise<T>): Promise<[T, number | null]> => {
    const before = cpuSeconds?.() ?? 0;
    const value = await fn();
    return [value, cpuSeconds ? cpuSeconds() - before : null];
  };
  const pairs: UploadPair[] = [];
  const kinds = ["put", "tus", "chunked", "multipart", "routed"] as const;
  for (let round = 0; round < rounds; round++) {
    for (const chunkMiB of chunkMiBs) {
      const chunkBytes = Math.round(chunkMiB * MIB);
      // Each round starts the rotation one transfer later, so every transfer runs first, second, … in turn.
      const order = kinds
        .map((_, i) => kinds[(i + round) % kinds.length]!)
        .filter((kind) => (kind !== "multipart" && kind !== "routed") || chunkMiB >= MIN_PART_MIB);
      const ms: Record<string, number> = {};
      const cpu: Record<string, number | null> = {};
      const cleanups: (() => Promise<void>)[] = [];
      for (const kind of order) {
        // Each transfer starts from the same disk: the one before removed and its writes flushed. Measured without
        // this: within a round every transfer was slower than the one before it (the local bucket's files and the
        // kernel's write-back of the gigabytes before it), whatever the kind.
        for (const cleanup of cleanups.splice(0)) await cleanup();
        execFileSync("sync");
        if (kind === "put") {
          const [p, c] = await cpuOf(() => rawPut(origin, bytes));
          [ms.put, cpu.put] = [p.ms, c];
          cleanups.push(() => deleteFloorObject(origin, p.key));
        } else if (kind === "tus") {
          const [u, c] = await cpuOf(() => tusUpload(origin, bytes, sha256, chunkBytes));
          [ms.tus, cpu.tus] = [u.ms, c];
          cleanups.push(() => deleteUpload(u.url));
        } else if (kind === "chunked") {
          const [f, c] = await cpuOf(() => chunkedPuts(origin, bytes, chunkBytes));
          [ms.chunked, cpu.chunked] = [f.ms, c];
          cleanups.push(async () => void (await sendOk("DELETE", `${origin}/floor/chunks?run=${f.run}`)));
        } else {
          const [m, c] = await cpuOf(() =>
            multipartPuts(origin, bytes, chunkBytes, kind === "routed" ? { sha256 } : undefined),
          );
          [ms[kind], cpu[kind]] = [m.ms, c];
          cleanups.push(() => deleteFloorObject(origin, m.key));
        }
      }
      const pair: UploadPair = {
        round: round + 1,
        chunkMiB,
        order,
        rawPutFirst: order.indexOf("put") < order.indexOf("tus"),
        rawPutMs: ms.put!,
        uploadMs: ms.tus!,
        chunkedMs: ms.chunked!,
        multipartMs: ms.multipart ?? null,
        routedMs: ms.routed ?? null,
        rawPutCpu: cpu.put ?? null,
        uploadCpu: cpu.tus ?? null,
        chunkedCpu: cpu.chunked ?? null,
        multipartCpu: cpu.multipart ?? null,
        routedCpu: cpu.routed ?? null,
      };
      pairs.push(pair);
      const cpuText = cpuSeconds
        ? `; server CPU s: put ${pair.rawPutCpu!.toFixed(2)}, upload ${pair.uploadCpu!.toFixed(2)}, chunked ` +
          `${pair.chunkedCpu!.toFixed(2)}${pair.multipartCpu === null ? "" : `, multipart ${pair.multipartCpu.toFixed(2)}`}` +
          `${pair.routedCpu === null ? "" : `, routed ${pair.routedCpu.toFixed(2)}`}`
        : "";
      log(
        `upload round ${round + 1}, ${chunkMiB} MiB chunks (${order.join(" → ")}): raw put ${pair.rawPutMs.toFixed(0)} ms, ` +
          `tus ${pair.uploadMs.toFixed(0)} ms, chunked puts ${pair.chunkedMs.toFixed(0)} ms` +
          `${pair.multipartMs === null ? "" : `, multipart ${pair.multipartMs.toFixed(0)} ms`}` +
          `${pair.routedMs === null ? "" : `, routed ${pair.routedMs.toFixed(0)} ms`}; ` +
          `ratio ${(pair.rawPutMs / pair.uploadMs).toFixed(2)}, tus vs chunked ${(pair.chunkedMs / pair.uploadMs).toFixed(2)}${cpuText}`,
      );
      // The local bucket keeps every object on disk until the run ends: free them as we go.
      for (const cleanup of cleanups.splice(0)) await cleanup();
    }
  }
  // BENCH_UPLOAD_ROUNDS=0 measures no pairs (the heap peaks only): no rows then.
  return { sizeBytes, chunkMiBs, pairs, rows: rounds === 0 ? [] : uploadRows(sizeBytes, chunkMiBs, pairs) };
}

const GIB = 1024 * MIB;

const list = (values: number[]) => values.map((r) => r.toFixed(2)).join(", ");

function uploadRows(sizeBytes: number, chunkMiBs: number[], pairs: UploadPair[]): TargetRow[] {
  const mbps = (ms: number) => sizeBytes / 1e6 / (ms / 1000);
  const gib = sizeBytes / GIB;
  return chunkMiBs.flatMap((chunkMiB) => {
    const mine = pairs.filter((pair) => pair.chunkMiB === chunkMiB);
    // The verdict is the median of the pairs' own ratios: a pair's transfers ran back to back.
    const ratios = mine.map((pair) => pair.rawPutMs / pair.uploadMs);
    const verdict = median(ratios);
    const cpu = mine[0]?.uploadCpu != null;
    const perGiB = (pick: (p: UploadPair) => number | null) => (median(mine.map((p) => pick(p)!)) / gib).toFixed(2);
    const cpuNote = cpu
      ? `; server CPU s/GiB: upload ${perGiB((p) => p.uploadCpu)}, raw put ${perGiB((p) => p.rawPutCpu)}, ` +
        `chunked puts ${perGiB((p) => p.chunkedCpu)}` +
        (mine[0]!.multipartCpu === null ? "" : `, multipart ${perGiB((p) => p.multipartCpu)}`) +
        (mine[0]!.routedCpu === null ? "" : `, routed ${perGiB((p) => p.routedCpu)}`)
      : "";
    const rows: TargetRow[] = [
      {
        metric:
          `upload: tus-js-client, ${sizeBytes / MIB} MiB in ${chunkMiB} MiB PATCHes, client wall time ` +
          `(pairs: ${list(ratios)}${cpuNote})`,
        target: "≥ 0.9× raw put",
        floor: `raw put through the Worker ${median(mine.map((p) => mbps(p.rawPutMs))).toFixed(1)} MB/s`,
        measured: `${median(mine.map((p) => mbps(p.uploadMs))).toFixed(1)} MB/s`,
        ratio: ratio(verdict),
        met: verdict >= 0.9,
      },
    ];
    const chunked = mine.map((p) => p.chunkedMs / p.uploadMs);
    const chunking = mine.map((p) => p.rawPutMs / p.chunkedMs);
    rows.push({
      metric: `  the same upload against chunked puts of ${chunkMiB} MiB (rounds: ${list(chunked)}); chunked puts against the raw put: ${list(chunking)}`,
      target: "information",
      floor: `chunked puts ${median(mine.map((p) => mbps(p.chunkedMs))).toFixed(1)} MB/s (${ratio(median(chunking))} raw put)`,
      measured: `${median(mine.map((p) => mbps(p.uploadMs))).toFixed(1)} MB/s`,
      ratio: ratio(median(chunked)),
      met: null,
    });
    if (mine.every((p) => p.multipartMs !== null)) {
      const multipart = mine.map((p) => p.multipartMs! / p.uploadMs);
      const parting = mine.map((p) => p.rawPutMs / p.multipartMs!);
      rows.push({
        metric: `  the same upload against a multipart upload of ${chunkMiB} MiB parts (rounds: ${list(multipart)}); multipart against the raw put: ${list(parting)}`,
        target: "information",
        floor: `multipart ${median(mine.map((p) => mbps(p.multipartMs!))).toFixed(1)} MB/s (${ratio(median(parting))} raw put)`,
        measured: `${median(mine.map((p) => mbps(p.uploadMs))).toFixed(1)} MB/s`,
        ratio: ratio(median(multipart)),
        met: null,
      });
    }
    if (mine.every((p) => p.routedMs !== null)) {
      const routed = mine.map((p) => p.routedMs! / p.uploadMs);
      const routing = mine.map((p) => p.rawPutMs / p.routedMs!);
      rows.push({
        metric: `  the same upload against the same parts routed through one object that keeps their SHA-256 (rounds: ${list(routed)}); routed against the raw put: ${list(routing)}`,
        target: "information",
        floor: `routed ${median(mine.map((p) => mbps(p.routedMs!))).toFixed(1)} MB/s (${ratio(median(routing))} raw put)`,
        measured: `${median(mine.map((p) => mbps(p.uploadMs))).toFixed(1)} MB/s`,
        ratio: ratio(median(routed)),
        met: null,
      });
    }
    return rows;
  });
}

/** What the floor measures, printed under the table. */
export const UPLOAD_FLOOR_NOTE =
  "floor: one PUT /floor/r2-put of the same bytes through the same Worker (node:http, Content-Length, the body " +
  "piped natively into one R2 put(): no library, no hashing, no multipart, one request); measured: tus-js-client " +
  "from start() to onSuccess (POST, one PATCH per chunk, completion in the last). Client wall time both; a ratio " +
  "is raw put ms / upload ms of one interleaved pair; the row's ratio is the median pair. Chunked puts: one PUT per " +
  "chunk, one at a time, each into its own R2 object; multipart: one part per chunk of one multipart upload, then " +
  "complete() (chunks ≥ 5 MiB); routed: the same parts through one Durable Object that reads each into one buffer, " +
  "feeds a SHA-256 it keeps across parts and sends the buffer as the part. Each round rotates the order of the transfers.";
