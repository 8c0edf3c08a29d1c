import type { BufferShelf } from "./buffer-shelf.js";
import type { FillingPart } from "./filling-part.js";
import type { RunningDigest } from "./running-digest.js";
import type { WriteCoordinator, WriteEnding, WriteLease } from "./file-runner-rpc.js";

/** Received bytes are kept in SQLite rows of at most this size (a value may be at most 2 MB). */
const PENDING_ROW_BYTES = 1024 * 1024;

/** How often a writer that commits nothing (a slow client filling a part) renews its lease. */
const RENEW_MS = 10_000;

/**
 * Parts a writer uploads to R2 at once while the next one fills: a writer holds at most PARTS_IN_FLIGHT + 1 parts
 * and its read buffer (16 MiB with 5 MiB parts; docs/limits.md). One was enough to keep R2 busy, but the body then
 * stalled whenever a part filled before the one before it was stored (docs/performance.md, "Files, round 3").
 */
const PARTS_IN_FLIGHT = 2;

/**
 * The parts of one body under one lease: the part being filled, allocated at its full length and filled in place
 * (each byte is copied once, from the read into here, and the part goes to R2 as it is), the parts on their way to
 * R2 and to the FileRunner's record, and where the committed offset stands.
 */
export class PartWriter {
  /** The file's size: no byte goes past it. */
  readonly size: number;
  /** How many bytes of the file have arrived, this body's included. */
  position: number;
  /** Set once the FileRunner no longer takes this writer's commits (its lease went to another). */
  lost = false;
  /**
   * The last part on its way to R2 and then to the FileRunner's record: each part's commit waits for the one before
   * it, so commits stay in part order and awaiting this awaits them all.
   */
  inflight: Promise<void> = Promise.resolve();
  private readonly partSize: number;
  private partNumber: number;
  /** Where the part being filled starts in the file. */
  private partStart: number;
  /**
   * The part being filled. It starts with the bytes committed before this body (pending rows: already counted in the
   * offset and digested).
   */
  private part: Uint8Array;
  private filled = 0;
  /** Bytes at the start of `part` already kept as pending rows: only those after them are committed again. */
  private keptInPart: number;
  /** Where the committed offset stands. */
  private kept: number;
  /** With a chunk checksum, the parts uploaded but not committed: the whole chunk is committed once it matched. */
  private readonly newParts: R2UploadedPart[] = [];
  private readonly upload: R2MultipartUpload | null;
  private touched = Date.now();
  /** The parts uploading now (their commits, oldest first): at most PARTS_IN_FLIGHT, and one more filling. */
  private readonly uploading: Promise<void>[] = [];

  constructor(
    private readonly coordinator: WriteCoordinator,
    bucket: R2Bucket,
    key: string,
    private readonly lease: WriteLease,
    private readonly digest: RunningDigest | null,
    private readonly checked: boolean,
    private readonly buffers: BufferShelf,
  ) {
    const { file } = lease;
    this.size = file.size;
    this.partSize = file.partSize;
    this.partNumber = lease.partCount + 1;
    this.partStart = (this.partNumber - 1) * this.partSize;
    if (lease.filling) {
      // The part the writer before left in the FileRunner's memory, holding exactly the pending rows' bytes.
      this.part = lease.filling.bytes;
      this.filled = lease.filling.filled;
    } else {
      this.part = new Uint8Array(buffers.take(Math.min(this.partSize, file.size - this.partStart)));
      for (const row of lease.pending) {
        this.part.set(row, this.filled);
        this.filled += row.byteLength;
      }
    }
    if (this.partStart + this.filled !== file.offset) {
      throw new Error(`upload ${file.handle}: its pending bytes do not reach its offset ${file.offset}`);
    }
    this.keptInPart = this.filled;
    this.position = file.offset;
    this.kept = file.offset;
    this.upload = file.uploadId ? bucket.resumeMultipartUpload(key, file.uploadId) : null;
  }

  /** Copies `chunk` into the parts and the running digest, sending each part that fills on its way. */
  async write(chunk: Uint8Array): Promise<void> {
    for (let at = 0; at < chunk.byteLength;) {
      const piece = chunk.subarray(at, at + Math.min(this.part.byteLength - this.filled, chunk.byteLength - at));
      this.part.set(piece, this.filled);
      // The digest is fed from the part (reused only once R2 has it), not from the read buffer the next read refills.
      await this.digest?.update(this.part.subarray(this.filled, this.filled + piece.byteLength));
      this.filled += piece.byteLength;
      this.position += piece.byteLength;
      at += piece.byteLength;
      // The part holding the file's last byte waits for the body's end: only then is it known that no byte past
      // the length follows, and the offset never reaches the length from a body that is still going.
      if (this.filled === this.part.byteLength && this.partStart + this.partSize < this.size) await this.sendPart();
    }
  }

  /** Renews the lease when nothing was committed for RENEW_MS (a slow client filling a part). */
  async renewIfIdle(): Promise<void> {
    if (this.lost || Date.now() - this.touched <= RENEW_MS) return;
    this.touched = Date.now();
    if (!(await this.coordinator.renewWrite(this.lease.id))) this.lost = true;
  }

  /** Whether the body brought the file's last byte and the last part goes up from here, not through the FileRunner. */
  reachedEnd(): boolean {
    return this.position === this.size && this.upload !== null && this.filled > 0;
  }

  /** Sends the last part and commits what is left to commit. */
  async sendLast(): Promise<WriteEnding> {
    await this.sendPart();
    await this.inflight;
    if (this.checked && !this.lost) await this.commit(this.newParts, [], this.position);
    return this.lost ? "lost" : "done";
  }

  /**
   * Commits the bytes of the part being filled that are not kept yet as pending rows (and, with a checksum, the parts
   * uploaded), so a body that ends or breaks off loses nothing that arrived.
   */
  async keepRest(ending: "done" | "interrupted"): Promise<WriteEnding> {
    const fresh = this.part.subarray(this.keptInPart, this.filled);
    if (fresh.byteLength === 0 && this.newParts.length === 0) return ending;
    const rows: Uint8Array[] = [];
    for (let at = 0; at < fresh.byteLength; at += PENDING_ROW_BYTES)
      rows.push(fresh.subarray(at, at + PENDING_ROW_BYTES));
    await this.commit(this.newParts, rows, this.position);
    this.keptInPart = this.filled;
    return this.lost ? "lost" : ending;
  }

  /**
   * Once this body is over and its bytes are committed (call it only then), the part being filled: returned, for
   * the FileRunner to keep for the next writer, when the body ended as `ending` with every byte of it committed as
   * pending rows; otherwise shelved (the commit copied the rows into SQLite, so nothing reads the buffer) and null.
   */
  release(ending: WriteEnding): FillingPart | null {
    const whole = (ending === "done" || ending === "interrupted") && !this.lost;
    if (whole && this.filled > 0 && this.keptInPart === this.filled) {
      return { bytes: this.part, filled: this.filled, start: this.partStart };
    }
    this.buffers.give(this.part.buffer as ArrayBuffer);
    return null;
  }

  private async commit(parts: R2UploadedPart[], pending: Uint8Array[], to: number) {
    const ok = await this.coordinator.commitWrite(this.lease.id, { from: this.kept, offset: to, parts, pending });
    if (!ok) this.lost = true;
    this.kept = to;
    this.touched = Date.now();
  }

  /** Sends the full part on its way once a slot is free, and starts the next. */
  private async sendPart(): Promise<void> {
    const upload = this.upload;
    if (!upload)
      throw new Error(`upload ${this.lease.file.handle} has no multipart upload for part ${this.partNumber}`);
    const bytes = this.part;
    const number = this.partNumber++;
    const to = this.partStart + bytes.byteLength;
    while (this.uploading.length >= PARTS_IN_FLIGHT) await this.uploading.shift();
    this.partStart = to;
    this.part = new Uint8Array(this.buffers.take(Math.max(0, Math.min(this.partSize, this.size - this.partStart))));
    this.filled = 0;
    this.keptInPart = 0;
    if (this.lost) return;
    const uploaded = upload.uploadPart(number, bytes);
    const before = this.inflight;
    this.inflight = (async () => {
      const done = await uploaded;
      // R2 has the part's bytes, and the digest was fed them before the part filled: the buffer is free.
      this.buffers.give(bytes.buffer as ArrayBuffer);
      await before;
      if (this.lost) return;
      if (this.checked) this.newParts.push(done);
      else await this.commit([done], [], to);
    })();
    // Awaited when a slot is needed or at the end; until then a failure must not count as unhandled.
    this.inflight.catch(() => {});
    uploaded.catch(() => {});
    this.uploading.push(this.inflight);
  }
}
