// Files by handle under `wrangler dev`: 1 GiB through tus-js-client with the whole dev server SIGKILLed half-way
// and restarted on the same state (the FileRunner object, its SQLite and the local R2 bucket all die with it),
// resumed by the client and downloaded back whole and in two ranged halves; an upload cut off mid-PATCH and
// resumed on its URL; one principal's files invisible to another, and forged, tampered, expired and wrong-scope
// signed URLs refused; hostile chunks (too long, wrong type, a body cut short)
// that must never corrupt a file. Every file is checked by its sha256 end to end. Also the figures for
// docs/performance.md: tus upload and download throughput, the cost of the resume, and one raw R2 put() of the
// same 1 GiB in the same runtime.
//
// A Durable Object eviction mid-upload is the kill here: wrangler dev offers no way to evict one FileRunner from
// outside, and the FileRunner is library code (packages/durable-mcp-server/test/file-runner/file-runner.test.ts evicts
// one mid-upload inside workerd).
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sleep } from "@durable-mcp/test-harness";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  as,
  fileTool,
  GIB,
  handleOf,
  labUrlSecret,
  mbps,
  MIB,
  putFile,
  signFileUrl,
  startTusUpload,
  streamInto,
  testBytes,
  truncatedPatch,
  TUS,
  tusCreate,
  tusHead,
  tusPatch,
  writeTestFile,
  type TusRequestRecord,
} from "./files-client.ts";
import { seeded, suiteSeed } from "./random.ts";
import { startLab, type LabServer } from "./wrangler.ts";

const counterUrl = inject("counterUrl");
const SEED = suiteSeed();
const SIZE = GIB;
/** tus-js-client's chunk: one PATCH per 64 MiB. */
const CHUNK = 64 * MIB;

/** Polls `probe` until it returns something other than undefined (deadline: `ms`). */
async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** An answer reduced to what a client can compare: status, body and headers (but the Date). */
async function observe(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  const headers = [...response.headers].filter(([name]) => name !== "date").toSorted();
  return { status: response.status, body: await response.text(), headers };
}

/** A body of unknown length, in these pieces: sent chunked, without Content-Length. */
function chunked(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces.shift();
      if (piece) controller.enqueue(piece);
      else controller.close();
    },
  });
}

const unknownHandle = () => `file_${randomBytes(24).toString("base64url")}`;

describe("files: tus uploads, crashes, downloads and signed URLs under wrangler dev", () => {
  let lab: LabServer | undefined;
  let dir: string | undefined;
  let bigPath = "";
  let bigSha = "";
  const rand = seeded(SEED);
  const figures: Record<string, unknown> = { suite: "files", seed: SEED, sizeBytes: SIZE, chunkBytes: CHUNK };
  const origin = () => new URL(lab!.url).origin;

  beforeAll(async () => {
    console.log(`files suite: seed ${SEED} (replay with RELIABILITY_SEED=${SEED})`);
    dir = mkdtempSync(join(tmpdir(), "reliability-lab-files-"));
    bigPath = join(dir, "1gib.bin");
    const started = performance.now();
    bigSha = await writeTestFile(bigPath, String(SEED), SIZE);
    figures.generateMs = Math.round(performance.now() - started);
    lab = await startLab("files", counterUrl);
  });

  afterAll(async () => {
    console.log(JSON.stringify(figures));
    await lab?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "uploads 1 GiB with tus-js-client and downloads it whole, streamed: the same sha256",
    { timeout: 180_000 },
    async () => {
      const run = startTusUpload({
        origin: origin(),
        principal: "alice",
        source: { path: bigPath },
        size: SIZE,
        sha256: bigSha,
        chunkSize: CHUNK,
      });
      const started = performance.now();
      await run.done;
      const uploadMs = performance.now() - started;
      const url = run.upload.url!;
      const patches = run.stack.records.filter((record) => record.method === "PATCH");
      expect(patches.map((record) => record.status)).toEqual(Array(SIZE / CHUNK).fill(204));
      expect(patches.at(-1)!.responseOffset).toBe(SIZE);
      // Every byte went over the wire once (the rest is request lines and headers).
      const wire = run.stack.agent.bytesWritten;
      expect(wire).toBeGreaterThanOrEqual(SIZE);
      expect(wire).toBeLessThan(SIZE + MIB);
      const last = patches.at(-1)!;

      const hash = createHash("sha256");
      const download = await streamInto(hash, `${origin()}/files/${handleOf(url)}`, as("alice"));
      expect(download.status).toBe(200);
      expect(download.headers.get("ETag")).toBe(`"${bigSha}"`);
      expect(download.headers.get("Content-Length")).toBe(String(SIZE));
      expect(download.bytes).toBe(SIZE);
      expect(hash.digest("hex")).toBe(bigSha);

      figures.upload = {
        ms: Math.round(uploadMs),
        MBps: mbps(SIZE, uploadMs),
        patches: patches.length,
        wireBytes: wire,
        // From the last byte of the last PATCH leaving the client to its 204: the completion (last part, R2
        // multipart completion, the digest check).
        completionMs: Math.round(last.respondedAt! - last.bodyDoneAt!),
      };
      figures.download = { ms: Math.round(download.ms), MBps: mbps(SIZE, download.ms) };
      console.log(
        `files: 1 GiB tus upload (${CHUNK / MIB} MiB chunks) ${mbps(SIZE, uploadMs)} MB/s in ${Math.round(uploadMs)} ms; ` +
          `download ${mbps(SIZE, download.ms)} MB/s in ${Math.round(download.ms)} ms`,
      );

      // Termination frees the bucket (the persist dir holds every object until the suite ends). The upload URL
      // does nothing once its file is complete; the owner's credentials on it do.
      const spent = await fetch(url, { method: "DELETE", headers: TUS });
      expect(spent.status).toBe(404);
      await spent.body?.cancel();
      const gone = await fetch(url, { method: "DELETE", headers: { ...TUS, ...as("alice") } });
      expect(gone.status).toBe(204);
    },
  );

  it(
    "puts the same 1 GiB into R2 with one raw put() (the floor the tus upload is compared with)",
    { timeout: 120_000 },
    async () => {
      const put = await putFile(`${origin()}/bench/raw-put?size=${SIZE}`, bigPath, SIZE);
      expect(put.status).toBe(200);
      const stored = JSON.parse(put.body) as { key: string; size: number; putMs: number };
      expect(stored.size).toBe(SIZE);
      const upload = figures.upload as { MBps: number } | undefined;
      const rawMBps = mbps(SIZE, put.ms);
      figures.rawPut = {
        ms: Math.round(put.ms),
        MBps: rawMBps,
        putMsInWorker: stored.putMs,
        tusToRawRatio: upload ? Math.round((upload.MBps / rawMBps) * 100) / 100 : null,
      };
      console.log(
        `files: 1 GiB raw R2 put() ${rawMBps} MB/s in ${Math.round(put.ms)} ms` +
          (upload ? `; tus upload / raw put = ${Math.round((upload.MBps / rawMBps) * 100) / 100}` : ""),
      );
      const removed = await fetch(`${origin()}/bench/raw-put?key=${encodeURIComponent(stored.key)}`, {
        method: "DELETE",
      });
      expect(removed.status).toBe(204);
    },
  );

  it(
    "resumes 1 GiB after a SIGKILL of wrangler dev half-way, restarted on the same state; downloads it back in two ranged halves",
    { timeout: 240_000 },
    async () => {
      const server = lab!;
      // Past half-way, well into the PATCH in flight (the server trails the client by up to ~16 MB of buffers
      // here), so that the kill cuts a chunk of which the server has already kept a part.
      const killAt = SIZE / 2 + Math.floor(CHUNK * (0.5 + 0.35 * rand.next()));
      let killing: Promise<void> | undefined;
      const kill = { at: killAt, progress: 0, wireBytes: 0, downMs: 0, instance: server.instance };
      const run = startTusUpload({
        origin: origin(),
        principal: "alice",
        source: { path: bigPath },
        size: SIZE,
        sha256: bigSha,
        chunkSize: CHUNK,
        onProgress: (sent) => {
          if (killing || sent < killAt) return;
          kill.progress = sent;
          killing = (async () => {
            const down = performance.now();
            await server.crash();
            // Everything the client could have handed the server before it died.
            kill.wireBytes = run.stack.agent.bytesWritten;
            await server.start();
            kill.downMs = performance.now() - down;
          })();
        },
      });
      const started = performance.now();
      await run.done;
      const uploadMs = performance.now() - started;
      expect(killing).toBeDefined();
      await killing;
      expect(server.instance).toBe(kill.instance + 1);

      // The client lost its PATCH to the kill, asked the restarted server where the upload stands, and went on
      // from there: past the last byte the server had acknowledged (what arrived of the cut PATCH was kept too),
      // never from 0.
      const records = run.stack.records;
      const failed = records.findIndex((record) => record.method === "PATCH" && record.error !== null);
      expect(failed).toBeGreaterThanOrEqual(0);
      const acked = records
        .slice(0, failed)
        .filter((record) => record.method === "PATCH" && record.status === 204)
        .at(-1)!.responseOffset!;
      expect(records[failed]!.offset).toBe(acked);
      const resumedAt = records.findIndex(
        (record, i) => i > failed && record.method === "HEAD" && record.status === 200,
      );
      expect(resumedAt).toBeGreaterThan(failed);
      const resumed = records[resumedAt]!.responseOffset!;
      expect(acked).toBeGreaterThan(0);
      expect(resumed).toBeGreaterThan(acked);
      expect(resumed).toBeLessThanOrEqual(kill.wireBytes);
      expect(resumed).toBeLessThan(SIZE);
      const after = records.slice(resumedAt + 1).filter((record) => record.method === "PATCH");
      expect(after[0]!.offset).toBe(resumed);
      expect(after.map((record) => record.status)).toEqual(after.map(() => 204));
      expect(after.at(-1)!.responseOffset).toBe(SIZE);
      // Bytes over the wire, headers included: the file once, plus what the kill cut off.
      const wire = run.stack.agent.bytesWritten;
      expect(wire).toBeLessThan(1.5 * SIZE);
      const last = after.at(-1)!;

      // The server's view: ready, with the declared digest verified over the bytes from both instances.
      const handle = handleOf(run.upload.url!);
      const status = await fileTool(server.url, "alice", "file_status", { handle });
      expect(status.isError).toBeFalsy();
      expect(status.structuredContent).toMatchObject({
        handle,
        state: "ready",
        size: SIZE,
        sha256: bigSha,
        offset: SIZE,
      });

      // Download through the signed URL the file tool mints: cut off at a seeded odd offset, then resumed with a
      // Range from there; the two parts hash to the file's sha256.
      const link = await fileTool(server.url, "alice", "file_download_url", { handle });
      expect(link.isError).toBeFalsy();
      const { url, size, sha256, expiresAt } = link.structuredContent as Record<string, string | number>;
      expect(size).toBe(SIZE);
      expect(sha256).toBe(bigSha);
      expect(Date.parse(String(expiresAt))).toBeGreaterThan(Date.now());
      const cut = Math.floor(SIZE * (0.3 + 0.4 * rand.next())) | 1;
      const hash = createHash("sha256");
      const first = await streamInto(hash, String(url), {}, cut);
      expect(first.status).toBe(200);
      expect(first.bytes).toBe(cut);
      const rest = await streamInto(hash, String(url), { Range: `bytes=${cut}-` });
      expect(rest.status).toBe(206);
      expect(rest.headers.get("Content-Range")).toBe(`bytes ${cut}-${SIZE - 1}/${SIZE}`);
      expect(rest.headers.get("Content-Length")).toBe(String(SIZE - cut));
      expect(rest.headers.get("ETag")).toBe(`"${bigSha}"`);
      expect(rest.bytes).toBe(SIZE - cut);
      expect(hash.digest("hex")).toBe(bigSha);

      const resentBytes = wire - SIZE;
      figures.resumedUpload = {
        ms: Math.round(uploadMs),
        MBps: mbps(SIZE, uploadMs),
        killAtClientProgress: kill.progress,
        ackedBeforeKill: acked,
        wireBytesAtKill: kill.wireBytes,
        resumedFromOffset: resumed,
        lostInFlightBytes: kill.wireBytes - resumed,
        wireBytes: wire,
        resentBytes,
        killAndRestartMs: Math.round(kill.downMs),
        completionMs: Math.round(last.respondedAt! - last.bodyDoneAt!),
        failedRequests: records.filter((record: TusRequestRecord) => record.error !== null).length,
      };
      figures.rangedDownload = {
        cutAt: cut,
        firstMs: Math.round(first.ms),
        restMs: Math.round(rest.ms),
        MBps: mbps(SIZE, first.ms + rest.ms),
      };
      console.log(
        `files: 1 GiB tus upload with a SIGKILL at ${kill.progress} bytes sent: resumed from ${resumed}, ` +
          `${resentBytes} bytes on the wire beyond the file, ${Math.round(uploadMs)} ms in all ` +
          `(${Math.round(kill.downMs)} ms of kill and restart), ${mbps(SIZE, uploadMs)} MB/s; ` +
          `ranged download ${mbps(SIZE, first.ms + rest.ms)} MB/s`,
      );
      const gone = await fetch(`${origin()}/files/${handle}`, {
        method: "DELETE",
        headers: { ...TUS, ...as("alice") },
      });
      expect(gone.status).toBe(204);
    },
  );

  it("resumes an upload cut off mid-PATCH with a new tus.Upload on its URL", { timeout: 120_000 }, async () => {
    const size = 48 * MIB + 12_345;
    const { bytes, sha256 } = testBytes(`${SEED}-disconnect`, size);
    let aborting: Promise<void> | undefined;
    const first = startTusUpload({
      origin: origin(),
      principal: "alice",
      source: bytes,
      size,
      sha256,
      chunkSize: size,
      onProgress: (sent) => {
        // Mid-PATCH: abort() destroys the request's socket.
        if (!aborting && sent >= 0.4 * size) aborting = first.upload.abort();
      },
    });
    await until("the abort", () => (aborting ? true : undefined));
    await aborting;
    const url = first.upload.url!;
    expect(first.stack.records.filter((record) => record.method === "PATCH").map((record) => record.status)).toEqual([
      null,
    ]);

    // An empty PATCH at 0 queues behind the broken one in the FileRunner, so its answer says what was kept.
    const settled = await tusPatch(url, 0, new Uint8Array(0));
    const kept = settled.offset!;
    expect(settled.status).toBe(409);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(first.stack.agent.bytesWritten);

    const second = startTusUpload({
      origin: origin(),
      principal: "alice",
      source: bytes,
      size,
      sha256,
      chunkSize: size,
      uploadUrl: url,
    });
    await second.done;
    const head = second.stack.records[0]!;
    expect(head.method).toBe("HEAD");
    expect(head.responseOffset).toBe(kept);
    const patches = second.stack.records.filter((record) => record.method === "PATCH");
    expect(patches.map((record) => [record.offset, record.status])).toEqual([[kept, 204]]);
    // Only the rest went over the wire again.
    expect(second.stack.agent.bytesWritten).toBeLessThan(size - kept + 64 * 1024);

    const link = await fileTool(lab!.url, "alice", "file_download_url", { handle: handleOf(url) });
    const hash = createHash("sha256");
    const download = await streamInto(hash, String(link.structuredContent.url));
    expect(download.status).toBe(200);
    expect(hash.digest("hex")).toBe(sha256);
    figures.disconnect = { size, keptAtAbort: kept, resentBytes: second.stack.agent.bytesWritten };
  });

  it("keeps one principal's files invisible to another, and refuses forged, tampered, expired and wrong-scope URLs", async () => {
    const base = origin();
    const { bytes, sha256 } = testBytes(`${SEED}-isolation`, 2 * MIB + 3);
    const created = await tusCreate(base, "alice", bytes.length, { filename: "a.bin", sha256 });
    expect(created.status).toBe(201);
    expect((await tusPatch(created.url, 0, bytes)).status).toBe(204);
    const ready = handleOf(created.url);
    const open = await tusCreate(base, "alice", 1000);
    expect((await tusPatch(open.url, 0, new Uint8Array(100))).status).toBe(204);
    const uploading = handleOf(open.url);
    const unknown = unknownHandle();

    // Bob, with his own credentials, gets exactly what a handle that does not exist gets, on every method.
    const probes: Array<[string, RequestInit]> = [
      ["tus HEAD", { method: "HEAD", headers: { ...TUS, ...as("bob") } }],
      [
        "PATCH",
        {
          method: "PATCH",
          headers: {
            ...TUS,
            ...as("bob"),
            "Upload-Offset": "100",
            "Content-Type": "application/offset+octet-stream",
          },
          body: new Uint8Array(10),
        },
      ],
      ["GET", { headers: as("bob") }],
      ["download HEAD", { method: "HEAD", headers: as("bob") }],
      ["DELETE", { method: "DELETE", headers: { ...TUS, ...as("bob") } }],
      ["anonymous GET", {}],
    ];
    for (const [what, init] of probes) {
      const baseline = await observe(`${base}/files/${unknown}`, init);
      expect(baseline.status, what).toBe(404);
      for (const handle of [ready, uploading]) {
        expect(await observe(`${base}/files/${handle}`, init), `${what} ${handle}`).toEqual(baseline);
      }
    }
    // … and none of it touched Alice's files.
    expect((await tusHead(open.url)).offset).toBe(100);
    const hash = createHash("sha256");
    expect((await streamInto(hash, `${base}/files/${ready}`, as("alice"))).status).toBe(200);
    expect(hash.digest("hex")).toBe(sha256);

    // The file tools: Bob's answer for Alice's handle is the one for a handle that does not exist.
    const envelope = async (
      principal: string,
      tool: string,
      handle: string,
      extra: Record<string, number> = {},
    ): Promise<Record<string, unknown>> => {
      const result = await fileTool(lab!.url, principal, tool, { handle, ...extra });
      expect(result.isError, `${tool} as ${principal}`).toBe(true);
      const error = result.structuredContent.error as Record<string, unknown>;
      return { ...error, message: String(error.message).replace(handle, "<handle>") };
    };
    for (const [tool, extra] of [
      ["file_status", {}],
      ["file_download_url", {}],
      ["file_download_read", { offset: 0, length: 10 }],
    ] as const) {
      const baseline = await envelope("bob", tool, unknown, extra);
      expect(baseline.code).toBe("unknown_file");
      expect(await envelope("bob", tool, ready, extra)).toEqual(baseline);
      expect(await envelope("bob", tool, uploading, extra)).toEqual(baseline);
    }
    const mine = await fileTool(lab!.url, "alice", "file_status", { handle: ready });
    expect(mine.structuredContent).toMatchObject({ state: "ready", sha256 });

    // Signed URLs: the real one works without credentials; anything altered is 403, a signed one past its expiry
    // 401, and a URL only does what it was signed for.
    const link = await fileTool(lab!.url, "alice", "file_download_url", { handle: ready });
    const download = new URL(String(link.structuredContent.url));
    expect((await observe(download.href)).status).toBe(200);
    const sig = download.searchParams.get("sig")!;
    const exp = Number(download.searchParams.get("exp"));
    const withQuery = (handle: string, query: Record<string, string>) =>
      `${base}/files/${handle}?${new URLSearchParams(query).toString()}`;
    const flipped = sig.slice(0, 10) + (sig[10] === "A" ? "B" : "A") + sig.slice(11);
    const refused: Array<[string, string, number]> = [
      ["tampered signature", withQuery(ready, { exp: String(exp), sig: flipped }), 403],
      ["forged signature", withQuery(ready, { exp: String(exp), sig: randomBytes(32).toString("base64url") }), 403],
      ["expiry moved", withQuery(ready, { exp: String(exp + 3600), sig }), 403],
      ["no expiry", withQuery(ready, { sig }), 403],
      ["no signature", withQuery(ready, { exp: String(exp) }), 403],
      ["another handle", withQuery(uploading, { exp: String(exp), sig }), 403],
      ["the upload URL", created.url, 403],
    ];
    const secret = labUrlSecret();
    const now = Math.floor(Date.now() / 1000);
    // The suite signs like the server (the lab's secret is a test-only value): a valid one first, so that the
    // expired one's 401 means expired, not a signature of ours the server does not recognise.
    expect((await observe(signFileUrl(base, ready, "download", now + 600, secret))).status).toBe(200);
    refused.push(["expired", signFileUrl(base, ready, "download", now - 60, secret), 401]);
    refused.push(["signed with another secret", signFileUrl(base, ready, "download", now + 600, "x".repeat(48)), 403]);
    for (const [what, url, status] of refused) {
      const answer = await observe(url);
      expect(answer.status, what).toBe(status);
      expect(answer.body, what).not.toContain(sha256);
    }
    // A download URL moves no bytes in, and an expired upload URL is refused before anything is looked up.
    const patchInit = {
      method: "PATCH",
      headers: { ...TUS, "Upload-Offset": "100", "Content-Type": "application/offset+octet-stream" },
      body: new Uint8Array(10),
    };
    expect((await observe(open.url, { method: "HEAD", headers: TUS })).status).toBe(200);
    expect((await observe(open.url)).status).toBe(403);
    const uploadingDownload = signFileUrl(base, uploading, "download", now + 600, secret);
    expect((await observe(uploadingDownload, patchInit)).status).toBe(403);
    expect((await observe(uploadingDownload, { method: "HEAD", headers: TUS })).status).toBe(403);
    expect((await observe(uploadingDownload, { method: "DELETE", headers: TUS })).status).toBe(403);
    expect((await observe(signFileUrl(base, uploading, "upload", now - 60, secret), patchInit)).status).toBe(401);
    expect((await tusHead(open.url)).offset).toBe(100);
    // Credentials the lab does not take are 401, on the file endpoints as on MCP.
    expect((await observe(`${base}/files/${ready}`, { headers: { Authorization: "Basic YWxpY2U6" } })).status).toBe(
      401,
    );
  });

  it("keeps an upload URL working while its upload lives, takes the owner's credentials past an expired signature, and spends it when the file is complete", async () => {
    const base = origin();
    const size = 3 * MIB + 777;
    const { bytes, sha256 } = testBytes(`${SEED}-url-lifetime`, size);
    const created = await tusCreate(base, "alice", size, { filename: "long.bin", sha256 });
    expect(created.status).toBe(201);
    // The URL is signed until the upload expires (Upload-Expires, files.ttl), not for the download URLs' minutes.
    const exp = Number(new URL(created.url).searchParams.get("exp"));
    expect(exp * 1000).toBe(Date.parse(created.uploadExpires!));
    expect(exp * 1000).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
    expect((await tusPatch(created.url, 0, bytes.subarray(0, MIB))).status).toBe(204);

    // A URL whose signature expired (as a short-lived one would have, mid-upload): refused without credentials,
    // while tus-js-client, which keeps its URL and sends the owner's headers with every request, finishes on it.
    const handle = handleOf(created.url);
    const expired = signFileUrl(base, handle, "upload", Math.floor(Date.now() / 1000) - 60, labUrlSecret());
    expect((await tusHead(expired)).status).toBe(401);
    expect((await tusHead(expired, as("bob"))).status).toBe(401);
    const run = startTusUpload({
      origin: base,
      principal: "alice",
      source: bytes,
      size,
      sha256,
      chunkSize: MIB,
      uploadUrl: expired,
    });
    await run.done;
    const records = run.stack.records.map((record) => [record.method, record.status, record.responseOffset]);
    expect(records).toEqual([
      ["HEAD", 200, MIB],
      ["PATCH", 204, 2 * MIB],
      ["PATCH", 204, 3 * MIB],
      ["PATCH", 204, size],
    ]);
    const hash = createHash("sha256");
    expect((await streamInto(hash, `${base}/files/${handle}`, as("alice"))).status).toBe(200);
    expect(hash.digest("hex")).toBe(sha256);

    // Complete: the URL handed to the uploader can no longer look, write or delete; the owner's credentials can.
    const spent = [
      await observe(created.url, { method: "HEAD", headers: TUS }),
      await observe(created.url, {
        method: "PATCH",
        headers: { ...TUS, "Upload-Offset": String(size), "Content-Type": "application/offset+octet-stream" },
        body: new Uint8Array(0),
      }),
      await observe(created.url, { method: "DELETE", headers: TUS }),
      await observe(created.url, { method: "DELETE", headers: { ...TUS, ...as("bob") } }),
    ];
    expect(spent.map((answer) => answer.status)).toEqual([404, 404, 404, 404]);
    expect(await tusHead(created.url, as("alice"))).toEqual({ status: 200, offset: size, length: size });
    const gone = await fetch(created.url, { method: "DELETE", headers: { ...TUS, ...as("alice") } });
    expect(gone.status).toBe(204);
    expect((await tusHead(`${base}/files/${handle}`, as("alice"))).status).toBe(404);
  });

  it("refuses a chunked PATCH past Upload-Length whole, takes sha1 chunk checksums, and answers Range as RFC 9110 says", async () => {
    const base = origin();
    const { bytes, sha256 } = testBytes(`${SEED}-chunked-over`, 1000);
    const { url } = await tusCreate(base, "alice", 1000, { sha256 });
    expect((await tusPatch(url, 0, bytes.subarray(0, 600))).status).toBe(204);
    // No Content-Length: the excess shows up only as the body streams in. The whole PATCH is refused, the 400
    // bytes that would have fitted included (they used to be kept, and the file became ready behind a 413).
    const over = await tusPatch(url, 600, chunked([bytes.subarray(600), randomBytes(1)]));
    expect([over.status, over.offset]).toEqual([413, 600]);
    expect((await tusHead(url)).offset).toBe(600);
    const early = await fetch(`${base}/files/${handleOf(url)}`, { headers: as("alice") });
    expect(early.status).toBe(409);
    await early.body?.cancel();
    // The right 400 bytes, chunked too, with a sha1 chunk checksum (the tus checksum extension's required one).
    const sha1 = createHash("sha1").update(bytes.subarray(600)).digest("base64");
    const badSha1 = createHash("sha1").update(bytes.subarray(0, 400)).digest("base64");
    const refused = await tusPatch(url, 600, bytes.subarray(600), { "Upload-Checksum": `sha1 ${badSha1}` });
    expect([refused.status, refused.offset]).toEqual([460, 600]);
    const rest = await tusPatch(url, 600, chunked([bytes.subarray(600, 800), bytes.subarray(800)]), {
      "Upload-Checksum": `sha1 ${sha1}`,
    });
    expect([rest.status, rest.offset]).toEqual([204, 1000]);

    const file = `${base}/files/${handleOf(url)}`;
    const etag = `"${sha256}"`;
    const ranged = async (headers: Record<string, string>) => {
      const response = await fetch(file, { headers: { ...as("alice"), ...headers } });
      const body = Buffer.from(await response.arrayBuffer());
      return { status: response.status, range: response.headers.get("Content-Range"), body };
    };
    // Invalid (first after last) or several ranges: ignored, the whole file.
    for (const range of ["bytes=5-3", "bytes=0-1,3-4", "bytes=abc"]) {
      expect(await ranged({ Range: range }), range).toEqual({ status: 200, range: null, body: bytes });
    }
    expect(await ranged({ Range: "bytes=10-19" })).toEqual({
      status: 206,
      range: "bytes 10-19/1000",
      body: bytes.subarray(10, 20),
    });
    expect(await ranged({ Range: "bytes=-5" })).toEqual({
      status: 206,
      range: "bytes 995-999/1000",
      body: bytes.subarray(995),
    });
    expect((await ranged({ Range: "bytes=1000-" })).range).toBe("bytes */1000");
    expect((await ranged({ Range: "bytes=1000-" })).status).toBe(416);
    // If-Range: the range only when the ETag is still the file's.
    expect((await ranged({ Range: "bytes=10-19", "If-Range": etag })).status).toBe(206);
    expect(await ranged({ Range: "bytes=10-19", "If-Range": `"${"0".repeat(64)}"` })).toEqual({
      status: 200,
      range: null,
      body: bytes,
    });
  });

  it(
    "refuses hostile chunks without corrupting a file: too long, wrong type, a body cut short",
    { timeout: 120_000 },
    async () => {
      const base = origin();
      const verify = async (url: string, sha256: string) => {
        const hash = createHash("sha256");
        const download = await streamInto(hash, `${base}/files/${handleOf(url)}`, as("alice"));
        expect(download.status).toBe(200);
        expect(hash.digest("hex")).toBe(sha256);
      };

      // Past Upload-Length, the wrong content type, no tus version, a chunk checksum that does not match, a wrong
      // offset: each refused with its status, and the offset stays where it was.
      {
        const { bytes, sha256 } = testBytes(`${SEED}-small`, 1000);
        const { url } = await tusCreate(base, "alice", 1000, { sha256 });
        expect((await tusPatch(url, 0, bytes.subarray(0, 600))).status).toBe(204);
        const tooLong = await tusPatch(url, 600, randomBytes(401));
        expect([tooLong.status, tooLong.offset]).toEqual([413, 600]);
        const wrongType = await tusPatch(url, 600, bytes.subarray(600), { "Content-Type": "application/octet-stream" });
        expect(wrongType.status).toBe(415);
        const noVersion = await fetch(url, {
          method: "PATCH",
          headers: { "Upload-Offset": "600", "Content-Type": "application/offset+octet-stream" },
          body: bytes.subarray(600),
        });
        expect(noVersion.status).toBe(412);
        await noVersion.body?.cancel();
        const otherDigest = createHash("sha256").update(randomBytes(400)).digest("base64");
        const badChecksum = await tusPatch(url, 600, bytes.subarray(600), {
          "Upload-Checksum": `sha256 ${otherDigest}`,
        });
        expect([badChecksum.status, badChecksum.offset]).toEqual([460, 600]);
        const behind = await tusPatch(url, 500, bytes.subarray(500));
        expect([behind.status, behind.offset]).toEqual([409, 600]);
        expect((await tusHead(url)).offset).toBe(600);
        const rightDigest = createHash("sha256").update(bytes.subarray(600)).digest("base64");
        const done = await tusPatch(url, 600, bytes.subarray(600), { "Upload-Checksum": `sha256 ${rightDigest}` });
        expect([done.status, done.offset]).toEqual([204, 1000]);
        await verify(url, sha256);
      }

      // No 100 MiB PATCH on a 1 MiB upload here: the Worker answers 413 from Content-Length without reading the
      // body, and what a client then sees under wrangler dev is its local proxy's doing (it drains the unread body,
      // and depending on timing answers 413, 500 or resets the connection). The 413-and-nothing-kept guarantee is
      // checked in workerd (packages/durable-mcp-server/test/files/tus.test.ts, hostile-files.test.ts).

      // The whole file's digest is not the declared one: 460, the upload starts over at 0, nothing is served.
      {
        const { bytes, sha256 } = testBytes(`${SEED}-declared`, 2000);
        const { url } = await tusCreate(base, "alice", 2000, { sha256 });
        const wrong = await tusPatch(url, 0, randomBytes(2000));
        expect([wrong.status, wrong.offset]).toEqual([460, 0]);
        const early = await fetch(`${base}/files/${handleOf(url)}`, { headers: as("alice") });
        expect(early.status).toBe(409);
        await early.body?.cancel();
        expect((await tusPatch(url, 0, bytes)).status).toBe(204);
        await verify(url, sha256);
      }

      // A body cut short (Content-Length promises the whole file, the socket closes after 5 MiB and a bit, across
      // an R2 part boundary): the server keeps a prefix of what arrived, and the upload resumes from it.
      {
        const size = 8 * MIB + 4321;
        const { bytes, sha256 } = testBytes(`${SEED}-truncated`, size);
        const { url } = await tusCreate(base, "alice", size, { sha256 });
        const sent = 5 * MIB + 777;
        let seen = 0;
        const answer = await truncatedPatch(url, 0, size, bytes.subarray(0, sent), async () => {
          seen = await until("the first MiB kept", async () => {
            const { offset } = await tusHead(url);
            return offset !== null && offset >= MIB ? offset : undefined;
          });
        });
        expect(answer).toBeNull();
        const settled = await tusPatch(url, 0, new Uint8Array(0));
        const kept = settled.offset!;
        expect(settled.status).toBe(409);
        expect(kept).toBeGreaterThanOrEqual(seen);
        expect(kept).toBeLessThanOrEqual(sent);
        const rest = await tusPatch(url, kept, bytes.subarray(kept));
        expect([rest.status, rest.offset]).toEqual([204, size]);
        await verify(url, sha256);
        figures.truncated = { sent, seenBeforeClose: seen, kept };
      }

      // The same with a chunk checksum: nothing of an incomplete chunk is kept.
      {
        const size = 3 * MIB;
        const { bytes, sha256 } = testBytes(`${SEED}-truncated-checksum`, size);
        const { url } = await tusCreate(base, "alice", size, { sha256 });
        const checksum = `sha256 ${createHash("sha256").update(bytes).digest("base64")}`;
        const answer = await truncatedPatch(url, 0, size, bytes.subarray(0, 2 * MIB), () => sleep(500), {
          "Upload-Checksum": checksum,
        });
        expect(answer).toBeNull();
        const settled = await tusPatch(url, 0, new Uint8Array(0));
        expect([settled.status, settled.offset]).toEqual([204, 0]);
        const whole = await tusPatch(url, 0, bytes, { "Upload-Checksum": checksum });
        expect([whole.status, whole.offset]).toEqual([204, size]);
        await verify(url, sha256);
      }
    },
  );
});
