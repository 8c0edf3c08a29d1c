// How a PATCH body is read (src/file-runner/upload.ts): in large BYOB reads filled as the bytes arrive, not in the
// default reader's small chunks (4 KiB for a request body in workerd: 16,384 reads and promise turns per 64 MiB,
// docs/performance.md "Files, round 3"), and without giving up a byte that arrived when the body breaks off.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { objectKey } from "../../src/file-runner/file-runner-rpc.js";
import { FileStore } from "../../src/file-runner/file-store.js";
import { partSizeFor, receiveChunk } from "../../src/file-runner/upload.js";
import { newFileHandle } from "../../src/ids.js";
import { fixtureEnv } from "../helpers.js";
import { fileRunnerOf, MIB, randomBytes, sha256Hex } from "../files/helpers.js";

/**
 * A byte stream over `bytes` that answers each read with at most `piece` bytes and records what it was asked for:
 * the size of each BYOB request, or a pull without one (a default reader's). With `breakAt`, it errors once that
 * many bytes were delivered, like a connection that drops.
 */
function byteSource(bytes: Uint8Array, piece: number, breakAt?: number) {
  const asked: number[] = [];
  let defaultPulls = 0;
  let at = 0;
  const end = breakAt ?? bytes.byteLength;
  const stream = new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (at >= end) {
        if (breakAt === undefined) {
          controller.close();
          controller.byobRequest?.respond(0);
        } else controller.error(new Error("connection dropped"));
        return;
      }
      const request = controller.byobRequest;
      if (!request) {
        defaultPulls++;
        const n = Math.min(piece, end - at);
        controller.enqueue(bytes.slice(at, at + n));
        at += n;
        return;
      }
      const view = request.view!;
      asked.push(view.byteLength);
      const n = Math.min(piece, view.byteLength, end - at);
      new Uint8Array(view.buffer, view.byteOffset, n).set(bytes.subarray(at, at + n));
      at += n;
      request.respond(n);
    },
  });
  return { stream, asked, defaultPulls: () => defaultPulls, delivered: () => at };
}

async function newUpload(size: number, sha256: string | null) {
  const handle = newFileHandle();
  const runner = fileRunnerOf(handle);
  const access = { handle, principal: "alice" };
  await runner.create({ ...access, name: "x.bin", mimeType: "application/octet-stream", size, sha256, ttlMs: 60_000 });
  return { handle, runner, access };
}

describe("reading a PATCH body", () => {
  it("reads a byte stream in BYOB reads of up to 1 MiB into its parts, and the file completes with WebCrypto's digest", async () => {
    const bytes = randomBytes(12 * MIB + 777);
    const sha256 = await sha256Hex(bytes);
    const { handle, access } = await newUpload(bytes.byteLength, sha256);
    const source = byteSource(bytes, 512 * 1024);
    const outcome = await receiveChunk(
      fileRunnerOf(handle),
      fixtureEnv.FILES,
      objectKey(handle),
      access,
      0,
      source.stream,
      null,
      bytes.byteLength,
    );
    expect(outcome?.kind).toBe("written");
    expect(outcome?.file.state).toBe("ready");
    expect(outcome?.file.sha256).toBe(sha256);
    // Every read was a BYOB read of the reader's whole 1 MiB buffer, none a default reader's pull.
    expect(source.defaultPulls()).toBe(0);
    expect(source.asked.length).toBeGreaterThan(0);
    expect(new Set(source.asked)).toEqual(new Set([MIB]));
    const stored = await fixtureEnv.FILES.get(objectKey(handle));
    expect(await sha256Hex(new Uint8Array(await stored!.arrayBuffer()))).toBe(sha256);
  });

  it("keeps every byte a BYOB read delivered before the body broke off, and resumes from there after an eviction", async () => {
    const bytes = randomBytes(11 * MIB);
    const sha256 = await sha256Hex(bytes);
    const { handle, runner, access } = await newUpload(bytes.byteLength, sha256);
    // 5 MiB part, then 1.5 MiB more in odd pieces, then the connection drops.
    const cut = 6.5 * MIB;
    const source = byteSource(bytes, 300_001, cut);
    const key = objectKey(handle);
    const outcome = await receiveChunk(runner, fixtureEnv.FILES, key, access, 0, source.stream, null, null);
    expect(source.defaultPulls()).toBe(0);
    expect(outcome?.kind).toBe("interrupted");
    expect(outcome?.file.offset).toBe(cut);
    await evictDurableObject(runner);
    const saved = await runInDurableObject(runner, (_, state) => {
      const store = new FileStore(state.storage.sql);
      return { offset: store.read()!.offset, parts: store.partCount() };
    });
    expect(saved).toMatchObject({ offset: cut, parts: 1 });
    const rest = byteSource(bytes.subarray(cut), 700_000);
    const last = await receiveChunk(runner, fixtureEnv.FILES, key, access, cut, rest.stream, null, null);
    expect(last?.kind).toBe("written");
    expect(last?.file.sha256).toBe(sha256);
  });

  it("uploads two parts to R2 at once while the next one fills, never more, and commits them in order", async () => {
    const bytes = randomBytes(21 * MIB + 5);
    const sha256 = await sha256Hex(bytes);
    const { handle, runner, access } = await newUpload(bytes.byteLength, sha256);
    const source = byteSource(bytes, MIB);
    const partSize = partSizeFor(bytes.byteLength);
    // The real bucket, watched, and slow in a way that does not depend on the machine's speed: part n's upload is held
    // until the body has been read through part n + 2 (or to its end). A writer that uploads two parts at once gets
    // there (part 3 fills while 1 and 2 are held); one that allowed a third would start part 3 while 1 and 2 are still
    // held; one that uploads a part at a time never reads part 3 and is let go after HOLD_LIMIT_MS, uploading alone.
    // The most uploads under way at once is recorded.
    const HOLD_LIMIT_MS = 3_000;
    let active = 0;
    let most = 0;
    const order: number[] = [];
    const real = fixtureEnv.FILES;
    const watched = Object.create(real, {
      resumeMultipartUpload: {
        value: (key: string, uploadId: string) => {
          const upload = real.resumeMultipartUpload(key, uploadId);
          return Object.create(upload, {
            uploadPart: {
              value: async (number: number, value: Uint8Array) => {
                active++;
                most = Math.max(most, active);
                order.push(number);
                try {
                  const through = Math.min(bytes.byteLength, (number + 2) * partSize);
                  const deadline = Date.now() + HOLD_LIMIT_MS;
                  while (source.delivered() < through && Date.now() < deadline) {
                    await new Promise((resolve) => setTimeout(resolve, 2));
                  }
                  return await upload.uploadPart(number, value);
                } finally {
                  active--;
                }
              },
            },
          });
        },
      },
    }) as R2Bucket;
    const outcome = await receiveChunk(runner, watched, objectKey(handle), access, 0, source.stream, null, null);
    expect(outcome?.kind).toBe("written");
    expect(outcome?.file.sha256).toBe(sha256);
    expect(order).toEqual([1, 2, 3, 4, 5]);
    expect(most).toBe(2);
    const stored = await real.get(objectKey(handle));
    expect(await sha256Hex(new Uint8Array(await stored!.arrayBuffer()))).toBe(sha256);
  });
});
