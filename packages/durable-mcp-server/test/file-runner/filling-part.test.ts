// The part an upload is filling, kept in the FileRunner's memory between PATCHes (src/file-runner/filling-part.ts):
// a PATCH smaller than a part fills on in it instead of reading the pending rows back from SQLite; the rows stay the
// truth, read back after an eviction or after a writer that did not commit every byte it put in the part.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BufferShelf } from "../../src/file-runner/buffer-shelf.js";
import type { FillingSlot } from "../../src/file-runner/filling-part.js";
import { FileStore } from "../../src/file-runner/file-store.js";
import { newFileHandle } from "../../src/ids.js";
import {
  createUpload,
  expectStored,
  fileRunnerOf,
  handleOf,
  MIB,
  patch,
  randomBytes,
  sha256Hex,
  uploadOffset,
} from "../files/helpers.js";

/** The upload offset the FileRunner's kept part reaches (null: none kept), read inside the live instance. */
function keptPartAt(handle: string): Promise<number | null> {
  return runInDurableObject(
    fileRunnerOf(handle),
    (instance) => (instance as unknown as { filling: FillingSlot }).filling.offset,
  );
}

/** How many buffers the FileRunner keeps between writers: its shelf and its kept part. */
function buffersKept(handle: string): Promise<number> {
  return runInDurableObject(fileRunnerOf(handle), (instance) => {
    const { buffers, filling } = instance as unknown as { buffers: BufferShelf; filling: FillingSlot };
    return buffers.size + (filling.offset === null ? 0 : 1);
  });
}

/** The pending rows' sizes as stored. */
function pendingRows(handle: string): Promise<number[]> {
  return runInDurableObject(fileRunnerOf(handle), (_, state) =>
    new FileStore(state.storage.sql).pendingBytes().map((row) => row.byteLength),
  );
}

/** Counts the FileRunner's reads of its pending rows (the same module the test runs the object from). */
function countRowReads() {
  return vi.spyOn(FileStore.prototype, "pendingBytes");
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** A 9 MiB upload driven through the FileRunner itself, 2 MiB in: its part 1 kept, filled to 2 MiB. */
async function fileWithKeptPart() {
  const bytes = randomBytes(9 * MIB);
  const sha256 = await sha256Hex(bytes);
  const handle = newFileHandle();
  const runner = fileRunnerOf(handle);
  const access = { handle, principal: "alice" };
  await runner.create({ ...access, name: "x", mimeType: "a/b", size: bytes.byteLength, sha256, ttlMs: 60_000 });
  expect((await runner.write(access, 0, new Response(bytes.subarray(0, 2 * MIB)).body!, null))?.kind).toBe("written");
  expect(await keptPartAt(handle)).toBe(2 * MIB);
  return { bytes, sha256, handle, runner, access };
}

describe("the part being filled, kept between PATCHes", () => {
  it("carries 1 MiB PATCHes from one to the next without reading a pending row back, and the file is whole", async () => {
    // 5 MiB parts: two full ones filled by 1 MiB PATCHes, then 2 MiB + 5 bytes.
    const bytes = randomBytes(12 * MIB + 5);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    const reads = countRowReads();
    for (let at = 0; at < 12 * MIB; at += MIB) {
      reads.mockClear();
      expect((await patch(url, at, bytes.subarray(at, at + MIB))).status).toBe(204);
      const offset = at + MIB;
      const filledPart = offset % (5 * MIB) === 0;
      // A PATCH that filled its part sent it to R2: nothing is left to keep. No PATCH reads the rows (before the kept
      // part, each read all the rows of its part so far); a tus PATCH declares its length, so it is never refused
      // after recording a part and need not keep the rows that record drops.
      expect(reads).toHaveBeenCalledTimes(0);
      expect(await keptPartAt(handle)).toBe(filledPart ? null : offset);
      // The kept part counts among the 4 buffers kept between writers (3 parts and the read buffer).
      expect(await buffersKept(handle)).toBeLessThanOrEqual(4);
    }
    expect(await pendingRows(handle)).toEqual([MIB, MIB]);
    reads.mockClear();
    expect((await patch(url, 12 * MIB, bytes.subarray(12 * MIB))).status).toBe(204);
    // The last PATCH fills the last, shorter part and sends it; completion then finds no tail left to upload.
    const rowBytes = reads.mock.results.map(({ value }) =>
      (value as Uint8Array[]).reduce((sum, row) => sum + row.byteLength, 0),
    );
    expect(rowBytes).toEqual([0]);
    expect(await keptPartAt(handle)).toBeNull();
    await expectStored(handle, sha256, bytes.byteLength);
  });

  it("keeps the part among the 4 buffers it keeps between writers after a PATCH that sent parts up", async () => {
    const bytes = randomBytes(30 * MIB);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    // 4 parts sent (their buffers shelved as they landed), the read buffer back, and 2 MiB filling the fifth.
    expect((await patch(url, 0, bytes.subarray(0, 22 * MIB))).status).toBe(204);
    expect(await keptPartAt(handle)).toBe(22 * MIB);
    expect(await buffersKept(handle)).toBe(4);
    expect((await patch(url, 22 * MIB, bytes.subarray(22 * MIB))).status).toBe(204);
    await expectStored(handle, sha256, bytes.byteLength);
  });

  it("is gone after an eviction: the next PATCH reads the rows back and the bytes come out right", async () => {
    const bytes = randomBytes(11 * MIB + 3);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes.subarray(0, 3 * MIB + 7))).status).toBe(204);
    expect(await keptPartAt(handle)).toBe(3 * MIB + 7);
    await evictDurableObject(fileRunnerOf(handle));
    expect(await keptPartAt(handle)).toBeNull();
    const reads = countRowReads();
    // This PATCH fills part 1 from the rows read back, and leaves part 2 filling in memory.
    expect((await patch(url, 3 * MIB + 7, bytes.subarray(3 * MIB + 7, 6 * MIB))).status).toBe(204);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(await keptPartAt(handle)).toBe(6 * MIB);
    reads.mockClear();
    expect((await patch(url, 6 * MIB, bytes.subarray(6 * MIB, 8 * MIB))).status).toBe(204);
    expect(reads).toHaveBeenCalledTimes(0);
    expect((await patch(url, 8 * MIB, bytes.subarray(8 * MIB))).status).toBe(204);
    await expectStored(handle, sha256, bytes.byteLength);
  });

  it("is not kept from a chunk refused by its checksum: the next PATCH reads the rows, which never held the refused bytes", async () => {
    const bytes = randomBytes(8 * MIB);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes.subarray(0, 2 * MIB))).status).toBe(204);
    expect(await keptPartAt(handle)).toBe(2 * MIB);
    // The refused chunk was written into the kept part's buffer past its 2 MiB before its checksum was known.
    const refused = await patch(url, 2 * MIB, randomBytes(MIB), {
      "Upload-Checksum": `sha256 ${btoa(String.fromCharCode(...new Uint8Array(32)))}`,
    });
    expect(refused.status).toBe(460);
    expect(await uploadOffset(url)).toBe(2 * MIB);
    expect(await keptPartAt(handle)).toBeNull();
    const reads = countRowReads();
    expect((await patch(url, 2 * MIB, bytes.subarray(2 * MIB, 4 * MIB))).status).toBe(204);
    expect(reads).toHaveBeenCalledTimes(1);
    expect(await keptPartAt(handle)).toBe(4 * MIB);
    expect((await patch(url, 4 * MIB, bytes.subarray(4 * MIB))).status).toBe(204);
    await expectStored(handle, sha256, bytes.byteLength);
  });

  it("ends a body of a declared length at that length, whatever more it brings, and reads no rows for it", async () => {
    const { bytes, sha256, handle, runner, access } = await fileWithKeptPart();
    const reads = countRowReads();
    // Declared 4 MiB, brings 8 MiB (past the file's end): the first 4 MiB are the chunk, part 1 is recorded on the way.
    const more = new Uint8Array(8 * MIB);
    more.set(bytes.subarray(2 * MIB, 6 * MIB));
    const outcome = await runner.write(access, 2 * MIB, new Response(more).body!, null, 4 * MIB);
    expect(outcome).toMatchObject({ kind: "written", file: { offset: 6 * MIB } });
    expect(reads).toHaveBeenCalledTimes(0);
    expect(await pendingRows(handle)).toEqual([MIB]);
    expect(await keptPartAt(handle)).toBe(6 * MIB);
    const rest = await runner.write(access, 6 * MIB, new Response(bytes.subarray(6 * MIB)).body!, null, 3 * MIB);
    expect(rest?.file).toMatchObject({ state: "ready", offset: bytes.byteLength, sha256 });
    await expectStored(handle, sha256, bytes.byteLength);
  });

  it("lets a body of unknown length that started from it, recorded a part and ran past the length be taken back to the rows it found", async () => {
    const { bytes, sha256, handle, runner, access } = await fileWithKeptPart();
    // Of unknown length: 3 MiB that fill part 1 (sent to R2 and recorded on the way, which drops the rows it began
    // with), 1 MiB more, then more than the file has room for.
    const pieces = [bytes.slice(2 * MIB, 5 * MIB), bytes.slice(5 * MIB, 6 * MIB), randomBytes(4 * MIB)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const piece = pieces.shift();
        if (piece) controller.enqueue(piece);
        else controller.close();
      },
    });
    const reads = countRowReads();
    const outcome = await runner.write(access, 2 * MIB, body, null);
    expect(outcome?.kind).toBe("too_long");
    expect(outcome?.file.offset).toBe(2 * MIB);
    // The rows it found were read once, just before the part's record dropped them, and are back.
    expect(reads).toHaveBeenCalledTimes(1);
    expect(await pendingRows(handle)).toEqual([MIB, MIB]);
    expect(await keptPartAt(handle)).toBeNull();
    const rest = await runner.write(access, 2 * MIB, new Response(bytes.subarray(2 * MIB)).body!, null);
    expect(rest?.file).toMatchObject({ state: "ready", offset: bytes.byteLength, sha256 });
    await expectStored(handle, sha256, bytes.byteLength);
  });
});
