// The upload's resumable SHA-256 (src/file-runner/sha256-state.ts) against WebCrypto: any split of the bytes, a save and
// a restore at any point, and the state a FileRunner saves with its offset across an eviction.
import { evictDurableObject, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { FileRunnerRpc } from "../../src/file-runner/file-runner-rpc.js";
import { FileStore } from "../../src/file-runner/file-store.js";
import { Sha256, SHA256_STATE_BYTES } from "../../src/file-runner/sha256-state.js";
import { newFileHandle } from "../../src/ids.js";
import { toHex } from "../../src/util/encoding.js";
import { fixtureEnv } from "../helpers.js";
import { createUpload, handleOf, head, MIB, ORIGIN, patch, randomBytes, sha256Hex } from "../files/helpers.js";

function runnerOf(handle: string) {
  const namespace = fixtureEnv.FILE_RUNNER;
  return namespace.get(namespace.idFromName(handle)) as unknown as DurableObjectStub & FileRunnerRpc;
}

/** A small deterministic generator, so a failing split can be replayed. */
function lcg(seed: number) {
  let state = seed >>> 0;
  return (max: number) => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state % max;
  };
}

describe("Sha256 with a saved state", () => {
  it("equals WebCrypto at every length around the block and padding boundaries", async () => {
    const bytes = randomBytes(200);
    for (let length = 0; length <= 200; length++) {
      const ours = toHex(new Sha256().update(bytes.subarray(0, length)).digest());
      expect(ours, `length ${length}`).toBe(await sha256Hex(bytes.subarray(0, length)));
    }
  });

  it("equals WebCrypto over random splits, saved and restored between every two pieces", async () => {
    const next = lcg(15);
    for (const size of [1, 63, 64, 65, 4096, 3 * MIB + 17]) {
      const bytes = randomBytes(size);
      let hash = new Sha256();
      for (let at = 0; at < size;) {
        const end = Math.min(size, at + 1 + next(Math.max(1, size >> 3)));
        hash.update(bytes.subarray(at, end));
        const saved = hash.save();
        expect(saved.byteLength).toBe(SHA256_STATE_BYTES);
        expect(Sha256.lengthOf(saved)).toBe(end);
        hash = Sha256.restore(saved);
        at = end;
      }
      expect(toHex(hash.digest()), `size ${size}`).toBe(await sha256Hex(bytes));
    }
  });

  // Uploads in flight keep their saved state across a deploy: the bytes below were saved by the first
  // implementation (format 1) after 130 bytes of the pattern, so a faster compression function must save the very
  // same bytes and finish this state to WebCrypto's digest.
  it("keeps the saved format: a state saved by the first implementation restores and finishes", async () => {
    const bytes = Uint8Array.from({ length: 200 }, (_, i) => (i * 37 + 11) & 0xff);
    // Format byte, the 8 state words, the byte count (130), then the 64-byte block holding the 2 bytes past 128.
    const savedByFirst = [
      "01",
      "50f9ff453bdec22359014055476602d00572b7dfc5dc3b47b564153d23a82823",
      "0000000000000082",
      "8bb0" + "00".repeat(62),
    ].join("");
    expect(toHex(new Sha256().update(bytes.subarray(0, 130)).save())).toBe(savedByFirst);
    const restored = Sha256.restore(Uint8Array.from(savedByFirst.match(/../g)!, (pair) => parseInt(pair, 16)));
    expect(toHex(restored.update(bytes.subarray(130)).digest())).toBe(await sha256Hex(bytes));
  });

  it("leaves its state as it was when asked for a digest, and refuses a state of another shape", async () => {
    const bytes = randomBytes(1000);
    const hash = new Sha256().update(bytes.subarray(0, 500));
    expect(toHex(hash.digest())).toBe(await sha256Hex(bytes.subarray(0, 500)));
    hash.update(bytes.subarray(500));
    expect(toHex(hash.digest())).toBe(await sha256Hex(bytes));
    expect(() => Sha256.restore(new Uint8Array(10))).toThrow();
    const wrongFormat = hash.save();
    wrongFormat[0] = 99;
    expect(() => Sha256.restore(wrongFormat)).toThrow();
  });
});

describe("an upload's saved hash state", () => {
  it("is saved with every committed offset and survives an eviction: WebCrypto's digest of the bytes so far", async () => {
    const bytes = randomBytes(13 * MIB + 123);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    // Chunks that end inside parts, on a part boundary and mid-way through the pending rows.
    for (const end of [2 * MIB + 1, 5 * MIB, 7 * MIB + 999, 12 * MIB]) {
      const offset = Number((await head(url)).headers.get("Upload-Offset"));
      expect((await patch(url, offset, bytes.subarray(offset, end))).status).toBe(204);
      await evictDurableObject(runnerOf(handle));
      const saved = await runInDurableObject(runnerOf(handle), (_, state) => {
        const store = new FileStore(state.storage.sql);
        return { offset: store.read()!.offset, hash: store.hashState() };
      });
      expect(saved.offset).toBe(end);
      expect(toHex(Sha256.restore(saved.hash!).digest())).toBe(await sha256Hex(bytes.subarray(0, end)));
    }
    const last = await patch(url, 12 * MIB, bytes.subarray(12 * MIB));
    expect(last.status).toBe(204);
    const download = await fetchFile(handle);
    expect(download.headers.get("ETag")).toBe(`"${sha256}"`);
    expect(await sha256Hex(new Uint8Array(await download.arrayBuffer()))).toBe(sha256);
  });

  // The stored object is never read back to finish the digest: it is whatever the saved state says. A state
  // swapped for one over other bytes of the same length (zeros) makes the upload's digest that of zeros + the
  // rest, although the object in R2 holds the right bytes; a completion that re-read the object would find the
  // declared digest instead.
  it("is what completion finishes after an eviction: no byte already hashed is read back from R2", async () => {
    const bytes = randomBytes(11 * MIB + 7);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    const cut = 6 * MIB + 5;
    expect((await patch(url, 0, bytes.subarray(0, cut))).status).toBe(204);
    await evictDurableObject(runnerOf(handle));
    const zeros = new Uint8Array(cut);
    await runInDurableObject(runnerOf(handle), (_, state) => {
      const store = new FileStore(state.storage.sql);
      expect(store.read()!.offset).toBe(cut);
      state.storage.transactionSync(() => store.setHashState(new Sha256().update(zeros).save()));
    });
    await evictDurableObject(runnerOf(handle));
    const last = await patch(url, cut, bytes.subarray(cut));
    expect(last.status).toBe(460);
    const expected = new Uint8Array(bytes);
    expected.set(zeros, 0);
    expect(await last.text()).toContain(await sha256Hex(expected));
    // The upload was reset, and a clean one now verifies.
    expect((await head(url)).headers.get("Upload-Offset")).toBe("0");
    expect((await patch(url, 0, bytes)).status).toBe(204);
    expect((await fetchFile(handle)).headers.get("ETag")).toBe(`"${sha256}"`);
  });
});

describe("one writer at a time", () => {
  it("refuses the commits of a writer whose lease the object lost, and lets the next writer go on", async () => {
    const handle = newFileHandle();
    const runner = runnerOf(handle);
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

/** A commit of `bytes` zero bytes from offset 0, with the hash state over them. */
function commitOf(bytes: number) {
  return {
    from: 0,
    offset: bytes,
    parts: [],
    pending: [new Uint8Array(bytes)],
    hashState: new Sha256().update(new Uint8Array(bytes)).save(),
  };
}

function fetchFile(handle: string): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/files/${handle}`, { headers: { Authorization: "Bearer alice" } });
}
