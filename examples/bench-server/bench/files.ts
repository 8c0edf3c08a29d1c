// The files rows of `pnpm bench` (issues 15 and 32): a download against one raw R2 get() of the same object,
// measured in 3 interleaved rounds (raw put, fetch-driven upload, raw get of the uploaded object, download; the
// rounds' own upload figures are kept in `rounds` but are not the upload row), and the upload row as a user sees it
// (bench/files-upload.ts: tus-js-client against a raw put through the same Worker, client wall time, at 1, 5 and
// 50 MiB chunks). `measureFiles` returns rows shaped like the bench's targets table:
// { metric, target, floor, measured, ratio, met }.
//   BENCH_FILE_MIB   size of each transfer (default 256 MiB: see docs/performance.md, "Files, round 2")
import { createHash, randomFillSync } from "node:crypto";
import { measureUploads, uploadSettings, type UploadMeasurement } from "./files-upload.ts";
import { median, ratio, table } from "./stats.ts";
import type { TargetRow } from "./targets.ts";

const MIB = 1024 * 1024;
/** The lab's tus-js-client chunk: one PATCH per 64 MiB, under the 100 MB request body limit of Free and Pro. */
const CHUNK = 64 * MIB;
const TUS = { "Tus-Resumable": "1.0.0" };

export interface FileRound {
  rawPutMs: number;
  uploadMs: number;
  rawGetMs: number;
  downloadMs: number;
  /** CPU seconds the server's processes spent on each transfer, when `measureFiles` was given a way to read it. */
  cpu?: { rawPut: number; upload: number; rawGet: number; download: number };
}

export interface FilesMeasurement {
  sizeBytes: number;
  chunkBytes: number;
  rounds: FileRound[];
  rawPutMBps: number;
  uploadMBps: number;
  rawGetMBps: number;
  downloadMBps: number;
  uploadRatio: number;
  downloadRatio: number;
  /** ms per MiB on the server (wrangler dev's clock moves during CPU work), medians of 3 × 64 MiB. */
  hashMsPerMiB: { resumable: number; native: number };
  /** The upload rows as a user's stopwatch sees them (bench/files-upload.ts). */
  uploads: UploadMeasurement;
  /** First the upload row of the worst chunk size, then the download, then every chunk size's upload row. */
  rows: TargetRow[];
}

const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
const now = () => performance.now();

async function expectStatus(response: Response, status: number, what: string): Promise<string> {
  const text = await response.text();
  if (response.status !== status) throw new Error(`${what}: HTTP ${response.status} ${text}`);
  return text;
}

/** Reads a response body to its end, hashing it; ms from the request to the last byte. */
async function download(url: string, size: number): Promise<{ ms: number; sha256: string }> {
  const started = now();
  const response = await fetch(url);
  if (response.status !== 200 || !response.body) throw new Error(`GET ${url}: HTTP ${response.status}`);
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of response.body) {
    hash.update(chunk);
    bytes += chunk.byteLength;
  }
  if (bytes !== size) throw new Error(`GET ${url}: ${bytes} bytes, not ${size}`);
  return { ms: now() - started, sha256: hash.digest("hex") };
}

async function rawPut(origin: string, bytes: Uint8Array): Promise<{ ms: number; key: string }> {
  const started = now();
  const response = await fetch(`${origin}/floor/r2-put?size=${bytes.byteLength}`, { method: "PUT", body: bytes });
  const { key } = JSON.parse(await expectStatus(response, 200, "raw put")) as { key: string };
  return { ms: now() - started, key };
}

/** POST /files, then one PATCH per 64 MiB, as tus-js-client sends them; ms from the POST to the last 204. */
async function tusUpload(origin: string, bytes: Uint8Array, sha256: string): Promise<{ ms: number; url: string }> {
  const started = now();
  const created = await fetch(`${origin}/files`, {
    method: "POST",
    headers: {
      ...TUS,
      "Upload-Length": String(bytes.byteLength),
      "Upload-Metadata": `filename ${btoa("bench.bin")},sha256 ${btoa(sha256)}`,
    },
  });
  await expectStatus(created, 201, "tus creation");
  const url = created.headers.get("Location")!;
  for (let at = 0; at < bytes.byteLength; at += CHUNK) {
    const response = await fetch(url, {
      method: "PATCH",
      headers: { ...TUS, "Upload-Offset": String(at), "Content-Type": "application/offset+octet-stream" },
      body: bytes.subarray(at, Math.min(bytes.byteLength, at + CHUNK)),
    });
    await expectStatus(response, 204, `PATCH at ${at}`);
  }
  return { ms: now() - started, url };
}

/** The server-side CPU of the upload's native digest, per MiB (`resumable` is 0: the software SHA-256 is gone). */
async function hashCost(origin: string) {
  const runs: Array<{ resumableMs: number; nativeMs: number; mib: number }> = [];
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`${origin}/floor/sha256?mib=64`);
    runs.push(JSON.parse(await expectStatus(response, 200, "sha256 floor")));
  }
  return {
    resumable: median(runs.map((run) => run.resumableMs / run.mib)),
    native: median(runs.map((run) => run.nativeMs / run.mib)),
  };
}

/**
 * `cpuSeconds`, when given, reads the server's CPU time so far (e.g. its workerd processes' from /proc): each round
 * then also records the CPU each transfer cost, a figure that moves far less with the machine's load than MB/s.
 */
export async function measureFiles(
  origin: string,
  log: (message: string) => void,
  cpuSeconds?: () => number,
): Promise<FilesMeasurement> {
  const size = Number(process.env.BENCH_FILE_MIB ?? 256) * MIB;
  const bytes = new Uint8Array(size);
  for (let at = 0; at < size; at += 64 * 1024) randomFillSync(bytes, at, Math.min(64 * 1024, size - at));
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const rounds: FileRound[] = [];
  for (let round = 0; round < 3; round++) {
    const cpuOf = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
      const before = cpuSeconds?.() ?? 0;
      const value = await fn();
      return [value, (cpuSeconds?.() ?? 0) - before];
    };
    const [put, putCpu] = await cpuOf(() => rawPut(origin, bytes));
    const [upload, uploadCpu] = await cpuOf(() => tusUpload(origin, bytes, sha256));
    // No authenticate on the bench: every caller is the owner, as a signed URL's bearer would be.
    const handleUrl = upload.url.split("?")[0]!;
    // The download's floor: one raw get() of the very object the download serves.
    const objectKey = `files/${new URL(handleUrl).pathname.split("/").at(-1)}`;
    // In turn first and second: whichever read follows the upload directly pays for its aftermath.
    const reads = [
      () => cpuOf(() => download(`${origin}/floor/r2-get?key=${encodeURIComponent(objectKey)}`, size)),
      () => cpuOf(() => download(handleUrl, size)),
    ];
    const [[rawGet, rawGetCpu], [got, gotCpu]] =
      round % 2 === 0
        ? [await reads[0]!(), await reads[1]!()]
        : await (async () => {
            const second = await reads[1]!();
            return [await reads[0]!(), second];
          })();
    if (rawGet.sha256 !== sha256 || got.sha256 !== sha256) throw new Error("files bench: a download's sha256 differs");
    rounds.push({
      rawPutMs: put.ms,
      uploadMs: upload.ms,
      rawGetMs: rawGet.ms,
      downloadMs: got.ms,
      ...(cpuSeconds ? { cpu: { rawPut: putCpu, upload: uploadCpu, rawGet: rawGetCpu, download: gotCpu } } : {}),
    });
    const cpuNote = cpuSeconds
      ? ` (server CPU s: put ${putCpu.toFixed(2)}, upload ${uploadCpu.toFixed(2)}, get ${rawGetCpu.toFixed(2)}, download ${gotCpu.toFixed(2)})`
      : "";
    log(
      `files round ${round + 1}: raw put ${mbps(size, put.ms).toFixed(1)} MB/s, upload ${mbps(size, upload.ms).toFixed(1)} MB/s, ` +
        `raw get ${mbps(size, rawGet.ms).toFixed(1)} MB/s, download ${mbps(size, got.ms).toFixed(1)} MB/s${cpuNote}`,
    );
    // The local bucket keeps every object on disk until the run ends: free them as we go.
    await expectStatus(
      await fetch(`${origin}/floor/r2-put?key=${encodeURIComponent(put.key)}`, { method: "DELETE" }),
      204,
      "raw put cleanup",
    );
    await expectStatus(await fetch(handleUrl, { method: "DELETE", headers: TUS }), 204, "upload cleanup");
  }
  const hash = await hashCost(origin);
  // The upload row: tus-js-client against a raw put through the same Worker, at every chunk size (issue 32). The
  // rounds above still upload (the download needs an object) but their fetch-driven PATCHes are not the row.
  const uploads = await measureUploads(origin, uploadSettings(), log, cpuSeconds);
  const rawPutMBps = median(rounds.map((r) => mbps(size, r.rawPutMs)));
  const uploadMBps = median(rounds.map((r) => mbps(size, r.uploadMs)));
  const rawGetMBps = median(rounds.map((r) => mbps(size, r.rawGetMs)));
  const downloadMBps = median(rounds.map((r) => mbps(size, r.downloadMs)));
  // The verdict is the median of the rounds' own ratios: each round pairs a floor with the transfer measured right
  // after it, so the machine's drift cancels within a round (a ratio of medians can pair a fast round's floor with a
  // slow round's transfer).
  const uploadRatio = median(rounds.map((r) => r.rawPutMs / r.uploadMs));
  const downloadRatio = median(rounds.map((r) => r.rawGetMs / r.downloadMs));
  const spread = (pick: (r: FileRound) => number, floor: (r: FileRound) => number) =>
    rounds.map((r) => (floor(r) / pick(r)).toFixed(2)).join(", ");
  const mib = size / MIB;
  const worstUpload = uploads.rows.reduce((worst, row) =>
    parseFloat(row.ratio) < parseFloat(worst.ratio) ? row : worst,
  );
  const rows: TargetRow[] = [
    { ...worstUpload, metric: `worst chunk size of the rows below: ${worstUpload.metric}` },
    {
      metric: `download: GET /files/<handle>, ${mib} MiB (rounds: ${spread(
        (r) => r.downloadMs,
        (r) => r.rawGetMs,
      )})`,
      target: "≥ 0.95× raw get",
      floor: `raw R2 get ${rawGetMBps.toFixed(1)} MB/s`,
      measured: `${downloadMBps.toFixed(1)} MB/s`,
      ratio: ratio(downloadRatio),
      met: downloadRatio >= 0.95,
    },
    {
      metric: "upload hash CPU: the native DigestStream the FileRunner feeds (information)",
      target: "—",
      floor: "—",
      measured: `${((hash.native * 1e6) / MIB).toFixed(2)} ns/B`,
      ratio: "—",
      met: null,
    },
    ...uploads.rows,
  ];
  return {
    sizeBytes: size,
    chunkBytes: CHUNK,
    rounds,
    rawPutMBps,
    uploadMBps,
    rawGetMBps,
    downloadMBps,
    uploadRatio,
    downloadRatio,
    hashMsPerMiB: hash,
    uploads,
    rows,
  };
}

export function fileRowsTable(measurement: { rows: TargetRow[] }): string {
  return table([
    ["metric", "target", "floor", "measured", "ratio", "met"],
    ...measurement.rows.map((row) => [
      row.metric,
      row.target,
      row.floor,
      row.measured,
      row.ratio,
      row.met === null ? "—" : row.met ? "yes" : "NO",
    ]),
  ]);
}
