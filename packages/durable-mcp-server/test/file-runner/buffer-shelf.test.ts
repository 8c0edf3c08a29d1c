import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { BufferShelf } from "../../src/file-runner/buffer-shelf.js";
import {
  createUpload,
  expectStored,
  fileRunnerOf,
  handleOf,
  MIB,
  patch,
  randomBytes,
  sha256Hex,
} from "../files/helpers.js";

/** How many buffers the FileRunner of `handle` has on its shelf now. */
function shelved(handle: string): Promise<number> {
  return runInDurableObject(
    fileRunnerOf(handle),
    (instance) => (instance as unknown as { buffers: BufferShelf }).buffers.size,
  );
}

describe("BufferShelf", () => {
  it("lends a shelved buffer of the length asked for, and a new one for any other length", () => {
    const shelf = new BufferShelf(2);
    const eight = shelf.take(8);
    shelf.give(eight);
    const sixteen = shelf.take(16);
    expect(sixteen).not.toBe(eight);
    expect(sixteen.byteLength).toBe(16);
    expect(shelf.take(8)).toBe(eight);
    expect(shelf.size).toBe(0);
  });

  it("keeps at most its count, and never an empty or a detached buffer", () => {
    const shelf = new BufferShelf(2);
    for (let i = 0; i < 3; i++) shelf.give(new ArrayBuffer(4));
    expect(shelf.size).toBe(2);
    const detached = new ArrayBuffer(4);
    structuredClone(detached, { transfer: [detached] });
    const other = new BufferShelf(2);
    other.give(detached);
    other.give(new ArrayBuffer(0));
    expect(other.size).toBe(0);
    const none = new BufferShelf(0);
    none.give(new ArrayBuffer(4));
    expect(none.size).toBe(0);
    shelf.trim(1);
    expect(shelf.size).toBe(1);
    shelf.clear();
    expect(shelf.size).toBe(0);
  });
});

describe("a FileRunner's buffers", () => {
  it("carries its read buffer and parts from PATCH to PATCH, and the file comes out whole", async () => {
    // 5 MiB parts: three full ones filled by 1 MiB PATCHes, and a tail of 2 MiB + 5 bytes.
    const bytes = randomBytes(17 * MIB + 5);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    const between: number[] = [];
    for (let at = 0; at < bytes.byteLength; at += MIB) {
      const reply = await patch(url, at, bytes.subarray(at, Math.min(at + MIB, bytes.byteLength)));
      expect(reply.status).toBe(204);
      between.push(await shelved(handle));
    }
    // Between PATCHes at least the read buffer waits on the shelf (the part filling is kept apart: filling-part.ts),
    // never more than the shelf keeps; completion empties it.
    expect(between.slice(0, -1).every((count) => count >= 1 && count <= 4)).toBe(true);
    expect(between.at(-1)).toBe(0);
    await expectStored(handle, sha256, bytes.byteLength);
  });

  it("reuses a part whose upload landed for the next part of the same PATCH, bytes intact", async () => {
    // One PATCH of 23 MiB: parts go up two at a time while the next fills, from shelved buffers once they land.
    const bytes = randomBytes(23 * MIB);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes.subarray(0, 21 * MIB))).status).toBe(204);
    // The read buffer and the parts that landed wait for the next PATCH.
    expect(await shelved(handle)).toBeGreaterThanOrEqual(2);
    expect((await patch(url, 21 * MIB, bytes.subarray(21 * MIB))).status).toBe(204);
    await expectStored(handle, sha256);
  });
});
