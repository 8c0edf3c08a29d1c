import { MAX_PARTS, MIN_PART_BYTES } from "../limits.js";
import { toHex } from "../util/encoding.js";
import type { FileAccess } from "./file-access.js";
import { BufferShelf } from "./buffer-shelf.js";
import type { FillingPart } from "./filling-part.js";
import type { FileStore } from "./file-store.js";
import type { ChunkChecksum, WriteCoordinator, WriteEnding, WriteLease, WriteOutcome } from "./file-runner-rpc.js";
import { PartWriter } from "./part-writer.js";
import { digestStored, type RunningDigest } from "./running-digest.js";

const MIB = 1024 * 1024;

/**
 * What the FileRunner that runs a writer keeps for it between writers: buffers (buffer-shelf.ts), the running
 * whole-file digest (running-digest.ts) and the part being filled (filling-part.ts). A writer elsewhere gets none.
 */
export interface WriterMemory {
  /** Lends the parts and the read buffer and takes them back. */
  buffers: BufferShelf;
  /** The upload's running digest for this lease, or null when it did not survive (completion hashes the object). */
  digestFor(lease: WriteLease): RunningDigest | null;
  /** The part being filled, every byte of it committed, for the next writer to fill on in. */
  keepFilling(leaseId: string, part: FillingPart): void;
}

const NO_MEMORY: WriterMemory = {
  buffers: new BufferShelf(0),
  digestFor: () => null,
  keepFilling: () => {},
};

/** The part size for an upload of `length` bytes: the smallest whole MiB ≥ 5 MiB that fits in 10,000 parts. */
export function partSizeFor(length: number): number {
  const needed = Math.max(MIN_PART_BYTES, Math.ceil(length / MAX_PARTS));
  return Math.ceil(needed / MIB) * MIB;
}

export interface UploadTarget {
  store: FileStore;
  storage: DurableObjectStorage;
  bucket: R2Bucket;
  key: string;
}

/**
 * Receives one PATCH (or `file_upload_write`) body at `offset`, where it runs: inside the FileRunner (both tus PATCHes
 * and `file_upload_write` arrive there, the bytes go from the object straight to R2). Every full part is uploaded,
 * then committed with the offset after it. Without a per-chunk checksum, whatever is left when the body ends —
 * normally or broken off — is committed as pending rows, so a dropped connection loses nothing that arrived (only a
 * crash loses what is not committed yet: the part filling and the parts still uploading, at most PARTS_IN_FLIGHT + 1;
 * the client sends them again from HEAD's offset). With a checksum, nothing is committed until the whole chunk
 * arrived and matched it. A body that runs past the file's length is refused whole, whenever the excess shows up:
 * the FileRunner takes back what this body committed. `memory`, given by the FileRunner that runs this, lends what it
 * keeps between writers; a writer elsewhere gets none of it.
 */
export async function receiveChunk(
  coordinator: WriteCoordinator,
  bucket: R2Bucket,
  key: string,
  access: FileAccess,
  offset: number,
  body: ReadableStream<Uint8Array>,
  checksum: ChunkChecksum | null,
  length: number | null,
  memory: WriterMemory = NO_MEMORY,
): Promise<WriteOutcome | null> {
  const begun = await coordinator.beginWrite(access, offset, length);
  if (!begun || begun.kind === "refused") {
    await body.cancel().catch(() => {});
    return begun ? begun.outcome : null;
  }
  const { lease } = begun;
  let ending: WriteEnding;
  try {
    ending = await stream(coordinator, bucket, key, lease, body, checksum, length, memory);
  } catch (error) {
    // R2 or the FileRunner failed mid-body: the lease is released (what was committed stays), and that first
    // error is the one that propagates, not a second one from the release.
    await coordinator.endWrite(lease.id, "interrupted").catch(() => {});
    throw error;
  }
  return coordinator.endWrite(lease.id, ending);
}

async function stream(
  coordinator: WriteCoordinator,
  bucket: R2Bucket,
  key: string,
  lease: WriteLease,
  body: ReadableStream<Uint8Array>,
  checksum: ChunkChecksum | null,
  length: number | null,
  memory: WriterMemory,
): Promise<WriteEnding> {
  const chunkDigest = checksum ? new crypto.DigestStream(checksum.algorithm) : null;
  const chunkWriter = chunkDigest?.getWriter();
  const digest = memory.digestFor(lease);
  const parts = new PartWriter(coordinator, bucket, key, lease, digest, checksum !== null, memory.buffers);
  const reader = bodyReader(body, memory.buffers);
  const end = length === null ? null : lease.file.offset + length;
  const ending = await readBody(reader, parts, chunkWriter, end);
  // Every chunk read was copied into the parts (and the chunk digest got its own copy).
  if (ending === "done") reader.release();
  await parts.inflight;
  if (parts.lost) return "lost";

  if (ending === "too_long") {
    // The chunk's digest is never read now, and aborting its writer rejects it: handled here, not left unhandled.
    chunkDigest?.digest.catch(() => {});
    await chunkWriter?.abort().catch(() => {});
    return "too_long";
  }
  if (checksum) {
    await chunkWriter!.close();
    const sent = new Uint8Array(await chunkDigest!.digest);
    if (ending !== "done") return ending;
    if (!equalBytes(sent, checksum.digest)) return "checksum_mismatch";
  }
  const result = await (ending === "done" && parts.reachedEnd() ? parts.sendLast() : parts.keepRest(ending));
  // Every byte of the part being filled is committed now (or this writer lost its lease and the part means nothing).
  const filling = parts.release(result);
  if (filling) memory.keepFilling(lease.id, filling);
  return result;
}

/**
 * Reads the body into `parts` until it ends, breaks off or runs past the file's length (or the lease is lost), and
 * says how it ended. The chunk digest, when there is one, is fed every chunk that fits. A body of a declared length
 * ends at `end` (the upload offset it reaches): HTTP already holds a request body to its Content-Length, and cutting
 * any excess here means a body of a declared length that fits (beginWrite refused the others) is never refused after
 * it recorded a part, so the FileRunner need not read back the rows it began with (file-runner.ts, commitWrite).
 */
async function readBody(
  reader: BodyReader,
  parts: PartWriter,
  chunkWriter: WritableStreamDefaultWriter<Uint8Array> | undefined,
  end: number | null,
): Promise<"done" | "interrupted" | "too_long"> {
  for (;;) {
    let chunk: Uint8Array | null;
    try {
      chunk = await reader.read();
    } catch {
      return "interrupted";
    }
    if (!chunk) return "done";
    const past = end !== null && parts.position + chunk.byteLength > end;
    if (past) chunk = chunk.subarray(0, end - parts.position);
    // A chunk that does not fit is refused whole, as it is when its Content-Length says so up front.
    if (parts.position + chunk.byteLength > parts.size) {
      await reader.cancel();
      return "too_long";
    }
    // The reader reuses its buffer: the chunk digest gets its own copy (only with a tus Upload-Checksum).
    await chunkWriter?.write(chunk.slice());
    await parts.write(chunk);
    await parts.renewIfIdle();
    // Lost: the caller sees it and answers with it. Past its declared length: the body is over.
    if (parts.lost || past) {
      await reader.cancel();
      return "done";
    }
  }
}

/** The most one read of a body takes at once. */
const READ_BYTES = MIB;

/** A body's reader that hands out chunks valid until the next read; null at the end. */
interface BodyReader {
  read(): Promise<Uint8Array | null>;
  /** Stops the body; a failure to cancel changes nothing for the writer, which has stopped reading. */
  cancel(): Promise<void>;
  /** The body ended and nothing reads its last chunk any more: the read buffer goes back on the shelf. */
  release(): void;
}

/**
 * Reads with a BYOB reader into one buffer of READ_BYTES where the stream allows it (a request body in workerd
 * does): a read returns whatever has arrived, up to the buffer, where the default reader hands out 4 KiB chunks
 * (16,384 reads and promise turns per 64 MiB PATCH; see docs/performance.md, "Files, round 3"). A bytes-less stream
 * made in JavaScript has only the default reader. Never a read that waits for a minimum (`readAtLeast`): when the
 * body breaks off, everything read so far must already be in the caller's hands.
 */
function bodyReader(body: ReadableStream<Uint8Array>, buffers: BufferShelf): BodyReader {
  let byob: ReadableStreamBYOBReader | null = null;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // TypeError: not a byte stream. Expected for such a stream, not a failure: it is read chunk by chunk below.
    byob = null;
  }
  if (byob) {
    const reader = byob;
    let buffer = buffers.take(READ_BYTES);
    return {
      async read() {
        const next = await reader.read(new Uint8Array(buffer, 0, READ_BYTES));
        // The read transferred the buffer into the result: it is the result's from now on.
        if (next.value) buffer = next.value.buffer as ArrayBuffer;
        return next.done ? null : next.value;
      },
      cancel: () => reader.cancel().catch(() => {}),
      release: () => buffers.give(buffer),
    };
  }
  const reader = body.getReader();
  return {
    async read() {
      for (;;) {
        const next = await reader.read();
        if (next.done) return null;
        if (next.value.byteLength > 0) return next.value;
      }
    },
    cancel: () => reader.cancel().catch(() => {}),
    release: () => {},
  };
}

/**
 * Turns a fully received upload into the stored object: the buffered tail becomes the last part (or, for a file
 * smaller than one part, the whole object), then the sha256 is checked against the declared one. `digest` is the
 * running digest when it was fed every byte of the file; otherwise the digest is computed natively here, from the
 * bytes in hand for a single-part file, else in one pass over the stored object.
 */
export async function completeUpload(target: UploadTarget, digest: RunningDigest | null): Promise<WriteOutcome> {
  const { store, storage, bucket, key } = target;
  const file = store.read()!;
  const tail = concat(store.pendingBytes());
  if (!file.uploadId) {
    await bucket.put(key, tail, { httpMetadata: { contentType: file.mimeType } });
  } else {
    const upload = bucket.resumeMultipartUpload(key, file.uploadId);
    let parts = store.parts();
    if (tail.byteLength > 0) {
      const last = await upload.uploadPart(parts.length + 1, tail);
      storage.transactionSync(() => store.commitPart(last, file.size));
      parts = store.parts();
    }
    try {
      await upload.complete(parts);
    } catch (error) {
      // A completion that landed before a crash cannot be repeated; the object being there in full is proof.
      const head = await bucket.head(key);
      if (head?.size !== file.size) throw error;
    }
  }
  let sha256: Uint8Array;
  if (digest && digest.length === file.size) sha256 = await digest.finish();
  else {
    digest?.discard();
    sha256 = file.uploadId
      ? await digestStored(bucket, key, file.size)
      : new Uint8Array(await crypto.subtle.digest("SHA-256", tail));
  }
  const actual = toHex(sha256);
  if (file.declaredSha256 !== null && actual !== file.declaredSha256) {
    await bucket.delete(key);
    storage.transactionSync(() => store.reset());
    return { kind: "digest_mismatch", file: store.read()!, actual };
  }
  storage.transactionSync(() => store.markReady(actual));
  return { kind: "written", file: store.read()! };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const total = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < a.byteLength; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
