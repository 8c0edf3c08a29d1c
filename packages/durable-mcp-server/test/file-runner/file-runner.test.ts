import { evictDurableObject, runDurableObjectAlarm, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FileStore } from "../../src/file-runner/file-store.js";
import { newFileHandle } from "../../src/ids.js";
import { fixtureEnv } from "../helpers.js";
import {
  createUpload,
  expectStored,
  fileRunnerOf,
  handleOf,
  head,
  MIB,
  ORIGIN,
  patch,
  randomBytes,
  sha256Hex,
  uploadAll,
  uploadOffset,
} from "../files/helpers.js";

/** A body that delivers `bytes` and then breaks, as a dropped connection does. */
function breakingBody(bytes: Uint8Array, piece: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.byteLength) {
        controller.error(new Error("connection reset"));
        return;
      }
      controller.enqueue(bytes.slice(at, at + piece));
      at += piece;
    },
  });
}

describe("FileRunner", () => {
  it("resumes after an eviction mid-upload and still verifies the whole file", async () => {
    const bytes = randomBytes(11 * MIB + 3);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    // Evict between every two chunks: part buffers, part uploads and the digest must all survive it.
    for (let at = 0; at < bytes.byteLength; at += 3 * MIB) {
      await evictDurableObject(fileRunnerOf(handle));
      const offset = await uploadOffset(url);
      expect(offset).toBe(at);
      const reply = await patch(url, offset, bytes.subarray(offset, Math.min(bytes.byteLength, offset + 3 * MIB)));
      expect(reply.status).toBe(204);
    }
    await expectStored(handle, sha256);
  });

  it("keeps what arrived before a body broke off, and the upload resumes from there", async () => {
    const bytes = randomBytes(7 * MIB);
    const sha256 = await sha256Hex(bytes);
    const handle = newFileHandle();
    const runner = fileRunnerOf(handle);
    const access = { handle, principal: "alice" };
    await runner.create({
      ...access,
      name: "x.bin",
      mimeType: "application/octet-stream",
      size: bytes.byteLength,
      sha256,
      ttlMs: 60_000,
    });
    // 6.5 MiB arrive in 256 KiB pieces, then the connection drops.
    const outcome = await runner.write(access, 0, breakingBody(bytes.subarray(0, 6.5 * MIB), 256 * 1024), null);
    expect(outcome?.kind).toBe("interrupted");
    expect(outcome?.file.offset).toBe(6.5 * MIB);
    await evictDurableObject(runner);
    const rest = await runner.write(access, 6.5 * MIB, new Response(bytes.subarray(6.5 * MIB)).body!, null);
    expect(rest?.kind).toBe("written");
    expect(rest?.file.state).toBe("ready");
    expect(rest?.file.sha256).toBe(sha256);
  });

  it("discards a broken chunk that carried a checksum", async () => {
    const bytes = randomBytes(2 * MIB);
    const handle = newFileHandle();
    const runner = fileRunnerOf(handle);
    const access = { handle, principal: "alice" };
    await runner.create({ ...access, name: "x", mimeType: "a/b", size: bytes.byteLength, sha256: null, ttlMs: 60_000 });
    const checksum = {
      algorithm: "SHA-256" as const,
      digest: new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)),
    };
    const outcome = await runner.write(access, 0, breakingBody(bytes.subarray(0, MIB), 65_536), checksum);
    expect(outcome?.kind).toBe("interrupted");
    expect(outcome?.file.offset).toBe(0);
  });

  it("aborts an expired upload and removes its parts from R2", async () => {
    const handle = newFileHandle();
    const runner = fileRunnerOf(handle);
    const access = { handle, principal: "alice" };
    await runner.create({ ...access, name: "x", mimeType: "a/b", size: 12 * MIB, sha256: null, ttlMs: 1500 });
    await runner.write(access, 0, new Response(randomBytes(6 * MIB)).body!, null);
    // Read from storage, not through status(): a slow machine may already be past the expiry here.
    const file = await runInDurableObject(runner, (_, state) => new FileStore(state.storage.sql).read());
    expect(file?.uploadId).toBeTruthy();
    const upload = fixtureEnv.FILES.resumeMultipartUpload(`files/${handle}`, file!.uploadId!);
    // While the upload lives its multipart upload takes parts.
    await upload.uploadPart(3, "probe");
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, file!.expiresAt - Date.now()) + 50));
    // Expired is unknown at once, whether or not the alarm has cleaned up yet.
    expect(await runner.status(access)).toBeNull();
    await runDurableObjectAlarm(runner);
    // The multipart upload was aborted: it takes no more parts.
    await expect(upload.uploadPart(4, "probe")).rejects.toThrow();
  });

  it("deletes a finished file when it expires", async () => {
    const handle = newFileHandle();
    const runner = fileRunnerOf(handle);
    const access = { handle, principal: "alice" };
    const created = await runner.create({ ...access, name: "x", mimeType: "a/b", size: 5, sha256: null, ttlMs: 1000 });
    await runner.write(access, 0, new Response("hello").body!, null);
    expect(await fixtureEnv.FILES.head(`files/${handle}`)).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, created!.expiresAt - Date.now()) + 50));
    // The alarm is due: run it, unless the runtime already started it on its own (then runDurableObjectAlarm finds
    // none pending while that run may still be deleting). Either way, wait for the state, not for a duration.
    await runDurableObjectAlarm(runner);
    for (let i = 0; i < 200 && (await fixtureEnv.FILES.head(`files/${handle}`)) !== null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await fixtureEnv.FILES.head(`files/${handle}`)).toBeNull();
  });
});

describe("file access", () => {
  it("treats foreign, unknown and malformed handles alike (404)", async () => {
    const bytes = randomBytes(10);
    const { url } = await createUpload(bytes.byteLength);
    await uploadAll(url, bytes, 10);
    const handle = handleOf(url);
    const replies = await Promise.all(
      [
        [handle, "mallory"],
        [newFileHandle(), "alice"],
        ["..%2F..%2Fetc%2Fpasswd", "alice"],
        ["file_" + "A".repeat(500), "alice"],
      ].map(([h, who]) => SELF.fetch(`${ORIGIN}/files/${h}`, { headers: { Authorization: `Bearer ${who}` } })),
    );
    const bodies = await Promise.all(replies.map((r) => r.text()));
    expect(replies.map((r) => r.status)).toEqual([404, 404, 404, 404]);
    expect(new Set(bodies).size).toBe(1);
    // A foreign principal cannot upload to, inspect or delete it either.
    const mallory = { Authorization: "Bearer mallory" };
    const plainUrl = `${ORIGIN}/files/${handle}`;
    expect((await head(plainUrl, mallory)).status).toBe(404);
    expect((await patch(plainUrl, 10, new Uint8Array(0), mallory)).status).toBe(404);
    const del = await SELF.fetch(plainUrl, { method: "DELETE", headers: { ...mallory, "Tus-Resumable": "1.0.0" } });
    expect(del.status).toBe(404);
    expect((await SELF.fetch(plainUrl, { headers: { Authorization: "Bearer alice" } })).status).toBe(200);
  });

  it("answers 401 to an expired signed URL and 403 to a tampered one, before any lookup", async () => {
    const { url } = await createUpload(10);
    const handle = handleOf(url);
    const signed = new URL(url);
    const tampered = new URL(signed);
    tampered.searchParams.set("exp", String(Number(signed.searchParams.get("exp")) + 3600));
    expect((await head(tampered.toString())).status).toBe(403);
    const otherHandle = new URL(signed);
    otherHandle.pathname = `/files/${newFileHandle()}`;
    expect((await head(otherHandle.toString())).status).toBe(403);
    const badSig = new URL(signed);
    badSig.searchParams.set("sig", "A".repeat(43));
    expect((await head(badSig.toString())).status).toBe(403);
    // An upload URL does not download.
    expect((await SELF.fetch(url)).status).toBe(403);
    // A correctly signed but expired URL: signed here with the fixture's secret.
    const { UrlSigner } = await import("../../src/files/signed-urls.js");
    const signer = new UrlSigner(fixtureEnv.FILE_URL_SECRET);
    const expired = await signer.sign(`${ORIGIN}/files/${handle}`, "upload", handle, Date.now() - 1000);
    expect((await head(expired)).status).toBe(401);
    // The same for a handle that never existed: nothing tells the two apart.
    const ghost = newFileHandle();
    expect((await head(await signer.sign(`${ORIGIN}/files/${ghost}`, "upload", ghost, Date.now() - 1000))).status).toBe(
      401,
    );
  });
});

describe("completion", () => {
  it("finishes an upload whose last bytes were kept but whose completion was cut short", async () => {
    const bytes = randomBytes(6 * MIB + 100);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes.subarray(0, bytes.byteLength - 10))).status).toBe(204);
    // What receiving the last 10 bytes commits, then the process dies before completion runs.
    await runInDurableObject(fileRunnerOf(handle), (_, state) => {
      state.storage.transactionSync(() =>
        new FileStore(state.storage.sql).appendPending(bytes.subarray(bytes.byteLength - 10), bytes.byteLength),
      );
    });
    await evictDurableObject(fileRunnerOf(handle));
    // The next look at the file completes it: HEAD, as a resuming tus client sends it (with the owner's headers;
    // the upload URL alone does nothing once the file is complete, see upload-urls.test.ts).
    const status = await head(url, { Authorization: "Bearer alice" });
    expect(status.headers.get("Upload-Offset")).toBe(String(bytes.byteLength));
    await expectStored(handle, sha256);
  });

  // This used to keep the bytes up to the length and complete the file (a 413 for a file that became ready). A
  // PATCH past the length is now refused whole, however its excess arrives: nothing of it is kept.
  it("refuses a body that runs past the length after its last byte, keeping none of it", async () => {
    const bytes = randomBytes(1000);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    const runner = fileRunnerOf(handle);
    // One body: the 1000 bytes, then more in a later piece (no Content-Length to refuse it up front).
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.enqueue(new Uint8Array(50));
        controller.close();
      },
    });
    const outcome = await runner.write({ handle, signed: "upload" }, 0, body, null);
    expect(outcome?.kind).toBe("too_long");
    expect(outcome?.file).toMatchObject({ state: "uploading", offset: 0, sha256: null });
    expect((await head(url)).headers.get("Upload-Offset")).toBe("0");
    const again = await runner.write({ handle, signed: "upload" }, 0, new Response(bytes).body!, null);
    expect(again?.file).toMatchObject({ state: "ready", offset: 1000, sha256 });
  });

  it("takes back the parts a refused body had already recorded, and the pending bytes before it", async () => {
    const bytes = randomBytes(10 * MIB + 5);
    const sha256 = await sha256Hex(bytes);
    const handle = newFileHandle();
    const runner = fileRunnerOf(handle);
    const access = { handle, principal: "alice" };
    await runner.create({ ...access, name: "x", mimeType: "a/b", size: bytes.byteLength, sha256, ttlMs: 60_000 });
    expect((await runner.write(access, 0, new Response(bytes.subarray(0, 3 * MIB)).body!, null))?.kind).toBe("written");
    const before = await runInDurableObject(runner, (_, state) => {
      const store = new FileStore(state.storage.sql);
      return { parts: store.partCount(), pending: store.pendingBytes().map((row) => row.byteLength) };
    });
    expect(before).toEqual({ parts: 0, pending: [MIB, MIB, MIB] });
    // From 3 MiB in 1 MiB pieces: parts 1 (0–5 MiB) and 2 (5–10 MiB) go to R2 and are recorded on the way; then
    // a piece runs past the end.
    const pieces: Uint8Array[] = [];
    for (let at = 3 * MIB; at < 10 * MIB; at += MIB) pieces.push(bytes.slice(at, at + MIB));
    pieces.push(randomBytes(MIB));
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const piece = pieces.shift();
        if (piece) controller.enqueue(piece);
        else controller.close();
      },
    });
    const outcome = await runner.write(access, 3 * MIB, body, null);
    expect(outcome?.kind).toBe("too_long");
    expect(outcome?.file.offset).toBe(3 * MIB);
    const after = await runInDurableObject(runner, (_, state) => {
      const store = new FileStore(state.storage.sql);
      return { parts: store.partCount(), pending: store.pendingBytes().map((row) => row.byteLength) };
    });
    expect(after).toEqual(before);
    // Evicted too (the running digest saw the refused bytes), the upload still ends with the right sha256.
    await evictDurableObject(runner);
    const rest = await runner.write(access, 3 * MIB, new Response(bytes.subarray(3 * MIB)).body!, null);
    expect(rest?.file).toMatchObject({ state: "ready", offset: bytes.byteLength, sha256 });
    const stored = await fixtureEnv.FILES.get(`files/${handle}`);
    expect(await sha256Hex(new Uint8Array(await stored!.arrayBuffer()))).toBe(sha256);
  });
});
