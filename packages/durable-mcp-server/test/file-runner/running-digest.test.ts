// The upload's whole-file SHA-256 (src/file-runner/running-digest.ts): a native DigestStream the FileRunner keeps in
// memory from one PATCH to the next and hands on only at the exact offset it was fed to; after an eviction (or a
// refused chunk it had already been fed) completion digests the stored object in one native pass instead.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DigestSlot } from "../../src/file-runner/running-digest.js";
import { newFileHandle } from "../../src/ids.js";
import {
  createUpload,
  expectStored,
  fetchFile,
  fileRunnerOf,
  handleOf,
  MIB,
  patch,
  randomBytes,
  sha256Hex,
  uploadOffset,
} from "../files/helpers.js";

/** Where the FileRunner's kept running digest stands (null: none kept), read inside the live instance. */
function keptDigestAt(handle: string): Promise<number | null> {
  return runInDurableObject(
    fileRunnerOf(handle),
    (instance) => (instance as unknown as { digest: DigestSlot }).digest.offset,
  );
}

describe("an upload's running digest", () => {
  it("is kept in memory across PATCHes at every committed offset, and the file verifies", async () => {
    const bytes = randomBytes(13 * MIB + 123);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    // Chunks that end inside parts, on a part boundary and mid-way through the pending rows.
    for (const end of [2 * MIB + 1, 5 * MIB, 7 * MIB + 999, 12 * MIB]) {
      const offset = await uploadOffset(url);
      expect((await patch(url, offset, bytes.subarray(offset, end))).status).toBe(204);
      expect(await keptDigestAt(handle)).toBe(end);
    }
    expect((await patch(url, 12 * MIB, bytes.subarray(12 * MIB))).status).toBe(204);
    // Completion used it up.
    expect(await keptDigestAt(handle)).toBeNull();
    await expectStored(handle, sha256);
  });

  it("is rebuilt after an eviction by one pass over the stored object, which decides the file's digest", async () => {
    const bytes = randomBytes(11 * MIB + 7);
    const actual = await sha256Hex(bytes);
    // Declared: the digest of other bytes. Only a digest over what R2 holds can name the actual one.
    const { url } = await createUpload(bytes.byteLength, { sha256: await sha256Hex(randomBytes(64)) });
    const handle = handleOf(url);
    const cut = 6 * MIB + 5;
    expect((await patch(url, 0, bytes.subarray(0, cut))).status).toBe(204);
    expect(await keptDigestAt(handle)).toBe(cut);
    await evictDurableObject(fileRunnerOf(handle));
    expect(await keptDigestAt(handle)).toBeNull();
    expect(await uploadOffset(url)).toBe(cut);
    const last = await patch(url, cut, bytes.subarray(cut));
    expect(last.status).toBe(460);
    expect(await last.text()).toContain(actual);
    // The upload was reset; a clean one with the right declared digest verifies, eviction or not.
    expect(await uploadOffset(url)).toBe(0);
  });

  it("resumes after an eviction and verifies the whole file from the stored object", async () => {
    const bytes = randomBytes(12 * MIB + 1);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes.subarray(0, 7 * MIB))).status).toBe(204);
    await evictDurableObject(fileRunnerOf(handle));
    // Past 0 with no digest: the writer digests nothing, and none is kept for later.
    expect((await patch(url, 7 * MIB, bytes.subarray(7 * MIB, 9 * MIB))).status).toBe(204);
    expect(await keptDigestAt(handle)).toBeNull();
    expect((await patch(url, 9 * MIB, bytes.subarray(9 * MIB))).status).toBe(204);
    expect((await fetchFile(handle)).headers.get("ETag")).toBe(`"${sha256}"`);
  });

  it("is dropped when a chunk it was fed is refused, so the refused bytes never reach the file's digest", async () => {
    const bytes = randomBytes(8 * MIB);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes.subarray(0, 3 * MIB))).status).toBe(204);
    // Other bytes, whose checksum does not match them: all of it was fed to the digest, none of it kept.
    const wrong = randomBytes(3 * MIB);
    const refused = await patch(url, 3 * MIB, wrong, {
      "Upload-Checksum": `sha256 ${btoa(String.fromCharCode(...new Uint8Array(32)))}`,
    });
    expect(refused.status).toBe(460);
    expect(await uploadOffset(url)).toBe(3 * MIB);
    expect(await keptDigestAt(handle)).toBeNull();
    expect((await patch(url, 3 * MIB, bytes.subarray(3 * MIB))).status).toBe(204);
    expect((await fetchFile(handle)).headers.get("ETag")).toBe(`"${sha256}"`);
  });
});

describe("one writer at a time", () => {
  it("refuses the commits of a writer whose lease the object lost, and lets the next writer go on", async () => {
    const handle = newFileHandle();
    const runner = fileRunnerOf(handle);
    const access = { handle, principal: "alice" };
    await runner.create({ ...access, name: "x", mimeType: "a/b", size: 100, sha256: null, ttlMs: 60_000 });
    const first = await runner.beginWrite(access, 0, null);
    expect(first?.kind).toBe("lease");
    // The object restarts while the first writer streams: its lease is gone with the instance.
    await evictDurableObject(runner);
    const second = await runner.beginWrite(access, 0, null);
    expect(second?.kind).toBe("lease");
    if (first?.kind !== "lease" || second?.kind !== "lease") return;
    expect(await runner.commitWrite(first.lease.id, commitOf(10))).toBe(false);
    expect((await runner.endWrite(first.lease.id, "done"))?.kind).toBe("offset_mismatch");
    expect(await runner.commitWrite(second.lease.id, commitOf(20))).toBe(true);
    // A commit must continue from the committed offset, even under the right lease.
    expect(await runner.commitWrite(second.lease.id, commitOf(30))).toBe(false);
    expect(await runner.endWrite(second.lease.id, "done")).toMatchObject({ kind: "written", file: { offset: 20 } });
  });
});

/** A commit of `bytes` zero bytes from offset 0. */
function commitOf(bytes: number) {
  return { from: 0, offset: bytes, parts: [], pending: [new Uint8Array(bytes)] };
}
