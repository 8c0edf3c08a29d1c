import { MAX_PARTS, MIN_PART_BYTES } from "../limits.js";
import { toHex } from "../util/encoding.js";
import type { FileRecord, FileStore } from "./file-store.js";

const MIB = 1024 * 1024;
/** Received bytes are kept in SQLite rows of at most this size (a value may be at most 2 MB). */
const PENDING_ROW_BYTES = MIB;

/** The part size for an upload of `length` bytes: the smallest whole MiB ≥ 5 MiB that fits in 10,000 parts. */
export function partSizeFor(length: number): number {
  const needed = Math.max(MIN_PART_BYTES, Math.ceil(length / MAX_PARTS));
  return Math.ceil(needed / MIB) * MIB;
}

export type WriteOutcome =
  /** The bytes were kept; the upload may now be complete (`file.state === "ready"`). */
  | { kind: "written"; file: FileRecord }
  /** The body broke off: what arrived was kept, `file.offset` says how much. */
  | { kind: "interrupted"; file: FileRecord }
  | { kind: "offset_mismatch"; file: FileRecord }
  /** Upload-Checksum did not match the chunk: nothing was kept. */
  | { kind: "checksum_mismatch"; file: FileRecord }
  /** More bytes than the declared length: nothing of the chunk was kept, the offset is where it was. */
  | { kind: "too_long"; file: FileRecord }
  /** The whole file's sha256 is not the declared one: the stored bytes were deleted and the upload reset. */
  | { kind: "digest_mismatch"; file: FileRecord; actual: string };

/** A tus `Upload-Checksum`: the algorithm (by its WebCrypto name) and the digest the chunk must have. */
export interface ChunkChecksum {
  algorithm: "SHA-1" | "SHA-256";
  digest: Uint8Array;
}

export interface UploadTarget {
  store: FileStore;
  storage: DurableObjectStorage;
  bucket: R2Bucket;
  key: string;
}

/**
 * The sha256 of the upload so far, while this object instance lives. Its state cannot be saved, so after an
 * eviction it is gone and completion hashes the stored object instead; it is also dropped whenever bytes it saw
 * are discarded.
 */
export class RunningDigest {
  offset = 0;
  readonly #stream = new crypto.DigestStream("SHA-256");
  readonly #writer = this.#stream.getWriter();

  async feed(position: number, bytes: Uint8Array): Promise<boolean> {
    if (position !== this.offset) return false;
    await this.#writer.write(bytes);
    this.offset += bytes.byteLength;
    return true;
  }

  async hex(): Promise<string> {
    await this.#writer.close();
    return toHex(await this.#stream.digest);
  }
}

/**
 * Receives one PATCH (or `file_upload_write`) body at `offset`. Without a per-chunk checksum, every full part goes
 * to R2 as soon as it is whole, and whatever is left when the body ends — normally or broken off — goes into SQLite
 * rows, so a dropped connection loses nothing that arrived (only a crash loses the part being filled, at most one
 * part). With a checksum, nothing is kept until the whole chunk arrived and matched it. A body that runs past the
 * declared length is refused whole, whenever the excess shows up: the parts it already recorded are taken back.
 */
export async function receiveChunk(
  target: UploadTarget,
  offset: number,
  body: ReadableStream<Uint8Array>,
  checksum: ChunkChecksum | null,
  digest: RunningDigest | null,
): Promise<WriteOutcome> {
  const { store, storage } = target;
  const file = store.read()!;
  if (offset !== file.offset) {
    await body.cancel().catch(() => {});
    return { kind: "offset_mismatch", file };
  }
  const partSize = file.partSize;
  const chunkDigest = checksum ? new crypto.DigestStream(checksum.algorithm) : null;
  const chunkWriter = chunkDigest?.getWriter();
  const partsBefore = store.partCount();
  let partNumber = partsBefore + 1;
  let buffered = file.offset - (partNumber - 1) * partSize;
  /** The rows buffered before this body, once a part of this body took them (to put back if it overflows). */
  let pendingBefore: Uint8Array[] = [];
  let position = file.offset;
  let kept = file.offset;
  const carry = new ByteQueue();
  const newParts: R2UploadedPart[] = [];
  let upload: R2MultipartUpload | null = file.uploadId
    ? target.bucket.resumeMultipartUpload(target.key, file.uploadId)
    : null;
  let ending: "done" | "interrupted" | "too_long" = "done";

  const reader = body.getReader();
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>;
    try {
      next = await reader.read();
    } catch {
      ending = "interrupted";
      break;
    }
    if (next.done) break;
    // A chunk that does not fit is refused whole, as it is when its Content-Length says so up front.
    if (position + next.value.byteLength > file.size) {
      ending = "too_long";
      await reader.cancel().catch(() => {});
      break;
    }
    await chunkWriter?.write(next.value);
    await digest?.feed(position, next.value);
    carry.push(next.value);
    position += next.value.byteLength;
    // The part holding the file's last byte waits for the body's end: only then is it known that no byte past the
    // length follows, and the offset never reaches the length from a body that is still going.
    while (buffered + carry.length >= partSize && partNumber * partSize < file.size) {
      const take = partSize - buffered;
      const head = buffered > 0 ? store.pendingBytes() : [];
      if (buffered > 0) pendingBefore = head;
      const bytes = concat([...head, carry.take(take)]);
      if (!upload) {
        upload = await target.bucket.createMultipartUpload(target.key, {
          httpMetadata: { contentType: file.mimeType },
        });
        const id = upload.uploadId;
        storage.transactionSync(() => store.setUploadId(id));
      }
      const part = await upload.uploadPart(partNumber++, bytes);
      buffered = 0;
      if (checksum) {
        newParts.push(part);
      } else {
        kept += take;
        const at = kept;
        storage.transactionSync(() => store.commitPart(part, at));
      }
    }
  }

  if (ending === "too_long") {
    // The chunk's digest is never read now, and aborting its writer rejects it: handled here, not left unhandled.
    chunkDigest?.digest.catch(() => {});
    await chunkWriter?.abort().catch(() => {});
    // Parts recorded for this body go; R2 keeps their bytes until the same part numbers are uploaded again, and
    // complete() only uses the parts recorded here.
    if (kept !== file.offset) {
      storage.transactionSync(() => store.rollBack(partsBefore, pendingBefore, file.offset));
    }
    return { kind: "too_long", file: store.read()! };
  }
  if (checksum) {
    await chunkWriter!.close();
    const sent = new Uint8Array(await chunkDigest!.digest);
    if (ending !== "done") return { kind: ending, file: store.read()! };
    if (!equalBytes(sent, checksum.digest)) return { kind: "checksum_mismatch", file: store.read()! };
    // The chunk is whole and matches: keep its parts and its tail in one transaction.
    const partsEnd = position - carry.length;
    keep(target, carry, partsEnd, () => {
      for (const part of newParts) store.commitPart(part, partsEnd);
    });
    return { kind: "written", file: store.read()! };
  }
  keep(target, carry, kept);
  const now = store.read()!;
  return ending === "done" ? { kind: "written", file: now } : { kind: ending, file: now };
}

/**
 * In one transaction: `before` (parts to record), then what `carry` holds as SQLite rows after offset `from`,
 * moving the offset past them.
 */
function keep(target: UploadTarget, carry: ByteQueue, from: number, before?: () => void): void {
  const rows = carry.drain(PENDING_ROW_BYTES);
  target.storage.transactionSync(() => {
    before?.();
    let at = from;
    for (const row of rows) target.store.appendPending(row, (at += row.byteLength));
  });
}

/**
 * Turns a fully received upload into the stored object: the buffered tail becomes the last part (or, for a file
 * smaller than one part, the whole object), then the sha256 is checked against the declared one.
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
  const actual = digest && digest.offset === file.size ? await digest.hex() : await hashObject(bucket, key, file.size);
  if (file.declaredSha256 !== null && actual !== file.declaredSha256) {
    await bucket.delete(key);
    storage.transactionSync(() => store.reset());
    return { kind: "digest_mismatch", file: store.read()!, actual };
  }
  storage.transactionSync(() => store.markReady(actual));
  return { kind: "written", file: store.read()! };
}

/** sha256 of a stored object, streamed through the runtime's native digest. */
export async function hashObject(bucket: R2Bucket, key: string, size: number): Promise<string> {
  const object = await bucket.get(key);
  if (!object || object.size !== size) throw new Error(`stored object ${key} is missing or has the wrong size`);
  const hasher = new crypto.DigestStream("SHA-256");
  await object.body.pipeTo(hasher);
  return toHex(await hasher.digest);
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

/** A FIFO of byte chunks that hands out exact-length slices without copying more than it must. */
class ByteQueue {
  #chunks: Uint8Array[] = [];
  length = 0;

  push(chunk: Uint8Array): void {
    if (chunk.byteLength === 0) return;
    this.#chunks.push(chunk);
    this.length += chunk.byteLength;
  }

  /** Everything queued, as slices of at most `size` bytes. */
  drain(size: number): Uint8Array[] {
    const out: Uint8Array[] = [];
    while (this.length > 0) out.push(this.take(Math.min(size, this.length)));
    return out;
  }

  take(count: number): Uint8Array {
    const taken: Uint8Array[] = [];
    let need = count;
    while (need > 0) {
      const head = this.#chunks[0]!;
      if (head.byteLength <= need) {
        taken.push(head);
        this.#chunks.shift();
        need -= head.byteLength;
      } else {
        taken.push(head.subarray(0, need));
        this.#chunks[0] = head.subarray(need);
        need = 0;
      }
    }
    this.length -= count;
    return concat(taken);
  }
}
