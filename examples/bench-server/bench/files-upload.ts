// The upload row of the bench (issue 32): what a user's stopwatch says. A tus upload by tus-js-client (its own Node
// HTTP stack, one PATCH per chunk, one at a time, from a Buffer in memory) against a raw put of the same bytes
// through the same Worker: one `PUT /floor/r2-put` (node:http, Content-Length, the body piped natively into one R2
// put(): no library, no hashing, no multipart, one request). Both are client wall time, from the first byte asked
// for to the last answer (the tus upload's includes its POST and the completion in its last PATCH). Interleaved:
// each round does every chunk size, and within a pair the raw put goes first in even rounds and second in odd ones.
// Beside the time, the CPU the server's workerd processes spent on each transfer (utime + stime from /proc, both
// of wrangler dev's processes: its proxy and the runtime; one process runs the Worker and every Durable Object, so
// the figure is the Worker's and the FileRunner's CPU together).
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
  rawPutFirst: boolean;
  rawPutMs: number;
  uploadMs: number;
  /** Server CPU seconds of each transfer, when measured. */
  rawPutCpu: number | null;
  uploadCpu: number | null;
}

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
  if (!(mib > 0) || chunkMiBs.some((c) => !(c > 0)) || !(rounds > 0)) throw new Error("bad BENCH_UPLOAD_* setting");
  return { sizeBytes: Math.round(mib * MIB), chunkMiBs, rounds };
}

/** One PUT of `bytes` to the raw-put floor with node:http; ms to the answer, and the stored object's key. */
function rawPut(origin: string, bytes: Buffer): Promise<{ ms: number; key: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      `${origin}/floor/r2-put?size=${bytes.byteLength}`,
      { method: "PUT", headers: { "Content-Length": String(bytes.byteLength) } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`raw put: HTTP ${res.statusCode} ${body}`));
          resolve({ ms: performance.now() - started, key: (JSON.parse(body) as { key: string }).key });
        });
      },
    );
    req.on("error", reject);
    req.end(bytes);
  });
}

/** tus-js-client from start() to onSuccess; no retries (a failure fails the bench). */
function tusUpload(origin: string, bytes: Buffer, sha256: string, chunkBytes: number) {
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
  const bytes = Buffer.allocUnsafe(sizeBytes);
  for (let at = 0; at < sizeBytes; at += 64 * 1024) randomFillSync(bytes, at, Math.min(64 * 1024, sizeBytes - at));
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const cpuOf = async <T>(fn: () => Promise<T>): Promise<[T, number | null]> => {
    const before = cpuSeconds?.() ?? 0;
    const value = await fn();
    return [value, cpuSeconds ? cpuSeconds() - before : null];
  };
  const pairs: UploadPair[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const chunkMiB of chunkMiBs) {
      const rawPutFirst = round % 2 === 0;
      const put = () => cpuOf(() => rawPut(origin, bytes));
      const upload = () => cpuOf(() => tusUpload(origin, bytes, sha256, Math.round(chunkMiB * MIB)));
      let p: Awaited<ReturnType<typeof put>>;
      let u: Awaited<ReturnType<typeof upload>>;
      if (rawPutFirst) {
        p = await put();
        u = await upload();
      } else {
        u = await upload();
        p = await put();
      }
      const pair: UploadPair = {
        round: round + 1,
        chunkMiB,
        rawPutFirst,
        rawPutMs: p[0].ms,
        uploadMs: u[0].ms,
        rawPutCpu: p[1],
        uploadCpu: u[1],
      };
      pairs.push(pair);
      const cpu = cpuSeconds ? `; server CPU s: put ${p[1]!.toFixed(2)}, upload ${u[1]!.toFixed(2)}` : "";
      log(
        `upload round ${round + 1}, ${chunkMiB} MiB chunks: raw put ${p[0].ms.toFixed(0)} ms, tus ${u[0].ms.toFixed(0)} ms, ` +
          `ratio ${(p[0].ms / u[0].ms).toFixed(2)}${cpu}`,
      );
      // The local bucket keeps every object on disk until the run ends: free them as we go.
      await expectStatus(
        await fetch(`${origin}/floor/r2-put?key=${encodeURIComponent(p[0].key)}`, { method: "DELETE" }),
        204,
        "raw put cleanup",
      );
      await expectStatus(await fetch(u[0].url, { method: "DELETE", headers: TUS }), 204, "upload cleanup");
    }
  }
  return { sizeBytes, chunkMiBs, pairs, rows: uploadRows(sizeBytes, chunkMiBs, pairs) };
}

const GIB = 1024 * MIB;

function uploadRows(sizeBytes: number, chunkMiBs: number[], pairs: UploadPair[]): TargetRow[] {
  const mbps = (ms: number) => sizeBytes / 1e6 / (ms / 1000);
  const gib = sizeBytes / GIB;
  return chunkMiBs.map((chunkMiB) => {
    const mine = pairs.filter((pair) => pair.chunkMiB === chunkMiB);
    // The verdict is the median of the pairs' own ratios: a pair's two transfers ran back to back.
    const ratios = mine.map((pair) => pair.rawPutMs / pair.uploadMs);
    const verdict = median(ratios);
    const cpu = mine[0]?.uploadCpu != null;
    const cpuNote = cpu
      ? `; server CPU s/GiB: upload ${(median(mine.map((p) => p.uploadCpu!)) / gib).toFixed(2)}, raw put ${(
          median(mine.map((p) => p.rawPutCpu!)) / gib
        ).toFixed(2)}`
      : "";
    return {
      metric:
        `upload: tus-js-client, ${sizeBytes / MIB} MiB in ${chunkMiB} MiB PATCHes, client wall time ` +
        `(pairs: ${ratios.map((r) => r.toFixed(2)).join(", ")}${cpuNote})`,
      target: "≥ 0.9× raw put",
      floor: `raw put through the Worker ${median(mine.map((p) => mbps(p.rawPutMs))).toFixed(1)} MB/s`,
      measured: `${median(mine.map((p) => mbps(p.uploadMs))).toFixed(1)} MB/s`,
      ratio: ratio(verdict),
      met: verdict >= 0.9,
    };
  });
}

/** What the floor measures, printed under the table. */
export const UPLOAD_FLOOR_NOTE =
  "floor: one PUT /floor/r2-put of the same bytes through the same Worker (node:http, Content-Length, the body " +
  "piped natively into one R2 put(): no library, no hashing, no multipart, one request); measured: tus-js-client " +
  "from start() to onSuccess (POST, one PATCH per chunk, completion in the last). Client wall time both; a ratio " +
  "is raw put ms / upload ms of one interleaved pair; the row's ratio is the median pair.";
