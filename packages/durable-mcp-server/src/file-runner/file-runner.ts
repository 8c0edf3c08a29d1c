import { DurableObject } from "cloudflare:workers";
import { applySchema, schemaVersion } from "../storage/migrations.js";
import { expiryOf } from "../util/expiry.js";
import { FILE_SCHEMA, FileStore, type FileRecord } from "./file-store.js";
import type { FileAccess } from "./file-access.js";
import { UPLOAD_LEASE_MS } from "../limits.js";
import { DigestSlot, type RunningDigest } from "./running-digest.js";
import { BufferShelf, KEPT_BUFFERS } from "./buffer-shelf.js";
import { FillingSlot, type FillingPart } from "./filling-part.js";
import { openLease, type Lease } from "./write-lease.js";
import { completeUpload, partSizeFor, receiveChunk, type WriterMemory } from "./upload.js";
import {
  objectKey,
  type BeginWrite,
  type ChunkChecksum,
  type FileRunnerClass,
  type FileRunnerOptions,
  type FileRunnerRpc,
  type NewFile,
  type StoredFile,
  type WriteCommit,
  type WriteEnding,
  type WriteLease,
  type WriteOutcome,
} from "./file-runner-rpc.js";

/** One JSON line per file event, like the task events: `wrangler tail` and Workers Logs can follow a handle. */
function fileEvent(event: string, fields: Record<string, string | number | boolean | null>): void {
  const line = JSON.stringify({ event, ...fields });
  if (event === "file_digest_mismatch") console.warn(line);
  else console.log(line);
}

function refuse(outcome: WriteOutcome): BeginWrite {
  return { kind: "refused", outcome };
}

/** All bytes are in, the upload is not complete yet. */
function received(file: FileRecord): boolean {
  return file.state === "uploading" && file.offset === file.size;
}

/**
 * Builds the FileRunner Durable Object class: one object per file handle, holding the file's metadata and its
 * upload state in SQLite. Being one object per handle makes concurrent writes to one upload sequential.
 */
export function defineFileRunner<Env>(options: FileRunnerOptions): FileRunnerClass<Env> {
  return class FileRunner extends DurableObject<Env> implements FileRunnerRpc {
    private store = new FileStore(this.ctx.storage.sql);
    private ready: boolean;
    /** Creations, completions, terminations and expiry one at a time, in arrival order. */
    private queue: Promise<unknown> = Promise.resolve();
    /** The writer streaming into this upload now, if any: one at a time (see beginWrite). */
    private lease: Lease | null = null;
    /**
     * The upload's whole-file digest, fed every committed byte so far, between writers (a writer holds it in its
     * lease). Memory only: gone with an eviction or a crash, and completion then digests the stored object.
     */
    private digest = new DigestSlot();
    /** Parts and read buffers between writers (buffer-shelf.ts): at most 3 parts and a read buffer, 16 MiB. */
    private buffers = new BufferShelf(KEPT_BUFFERS);
    /** The part being filled between writers (filling-part.ts): one part, counted among the KEPT_BUFFERS. */
    private filling = new FillingSlot();

    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, env);
      const version = schemaVersion(ctx.storage.sql);
      if (version > 0) applySchema(ctx.storage, FILE_SCHEMA, version);
      this.ready = version > 0;
    }

    async create(file: NewFile): Promise<FileRecord | null> {
      return this.serialized(async () => {
        const existing = this.ready ? this.store.read() : null;
        if (existing) {
          const same =
            existing.principal === file.principal &&
            existing.size === file.size &&
            existing.declaredSha256 === file.sha256 &&
            existing.name === file.name;
          return same ? existing : null;
        }
        await this.insert(file, { declaredSha256: file.sha256, sha256: null, state: "uploading", offset: 0 });
        fileEvent("file_created", { handle: file.handle, size: file.size, mimeType: file.mimeType });
        // An empty file is complete the moment it exists.
        if (file.size === 0) await this.complete();
        return this.store.read();
      });
    }

    async status(access: FileAccess): Promise<FileRecord | null> {
      const file = this.owned(access);
      // A writer that holds the lease completes the upload itself.
      if (!file || !received(file) || this.lease) return file;
      // Every byte was kept but completion never ran (the process died in between): finish it now.
      return this.serialized(async () => {
        const again = this.owned(access);
        if (again && received(again)) await this.complete();
        return this.owned(access);
      });
    }

    async write(
      access: FileAccess,
      offset: number,
      body: ReadableStream<Uint8Array>,
      checksum: ChunkChecksum | null,
      length: number | null = null,
    ): Promise<WriteOutcome | null> {
      const memory: WriterMemory = {
        buffers: this.buffers,
        // The writer's lease gets the running digest if it stands at the lease's offset (design/files.md).
        digestFor: (granted: WriteLease) => {
          const lease = this.lease;
          if (lease?.id !== granted.id) return null;
          lease.digest = this.digest.take(granted.file.offset);
          return lease.digest;
        },
        keepFilling: (leaseId: string, part: FillingPart) => {
          if (this.lease?.id === leaseId) this.lease.filling = part;
        },
      };
      const key = objectKey(access.handle);
      return receiveChunk(this, this.bucket(), key, access, offset, body, checksum, length, memory);
    }

    /**
     * Starts a write at `offset`: waits while another writer holds the lease (so concurrent PATCHes stay sequential
     * and all but one then find the offset moved: 409), refuses what cannot be written, and hands the writer the
     * committed state it continues from. A lease whose writer went silent for UPLOAD_LEASE_MS lapses.
     */
    async beginWrite(access: FileAccess, offset: number, length: number | null): Promise<BeginWrite | null> {
      for (;;) {
        const held = this.lease;
        if (!held) break;
        const left = held.touchedAt + UPLOAD_LEASE_MS - Date.now();
        if (left <= 0) {
          fileEvent("file_write_lapsed", { handle: access.handle, lease: held.id });
          this.endLease(held);
          break;
        }
        await Promise.race([held.released, new Promise((resolve) => setTimeout(resolve, left))]);
      }
      const file = this.owned(access, "upload");
      if (!file) return null;
      if (file.state === "ready") {
        if (offset !== file.size) return refuse({ kind: "offset_mismatch", file });
        return refuse({ kind: length === 0 ? "written" : "too_long", file });
      }
      if (offset !== file.offset) return refuse({ kind: "offset_mismatch", file });
      if (length !== null && offset + length > file.size) return refuse({ kind: "too_long", file });
      // Every byte was kept but completion never ran (the process died in between): finish it now.
      if (received(file)) return refuse(await this.serialized(() => this.complete()));
      const partCount = this.store.partCount();
      const partStart = partCount * file.partSize;
      const kept = this.filling.take(partStart, Math.min(file.partSize, file.size - partStart), file.offset);
      // At a part's start there are no pending rows to read.
      const lease = openLease(
        file.offset,
        partCount,
        kept ? null : file.offset === partStart ? [] : this.store.pendingBytes(),
        length !== null,
      );
      this.lease = lease;
      let current = file;
      if (file.size > file.partSize && !file.uploadId) {
        try {
          const upload = await this.bucket().createMultipartUpload(objectKey(file.handle), {
            httpMetadata: { contentType: file.mimeType },
          });
          this.ctx.storage.transactionSync(() => this.store.setUploadId(upload.uploadId));
          current = this.store.read()!;
        } catch (error) {
          this.endLease(lease);
          throw error;
        }
      }
      const granted: WriteLease = {
        id: lease.id,
        file: current,
        partCount,
        pending: lease.pending ?? [],
        filling: kept,
      };
      return { kind: "lease", lease: granted };
    }

    async commitWrite(leaseId: string, commit: WriteCommit): Promise<boolean> {
      const lease = this.lease;
      if (lease?.id !== leaseId) return false;
      const file = this.ready ? this.store.read() : null;
      if (!file || file.state !== "uploading" || commit.from !== file.offset || commit.offset > file.size) return false;
      // Recording a part drops the pending rows it began with: a body that can still be refused as too long (one of
      // unknown length) must be able to put them back.
      if (commit.parts.length > 0 && lease.pending === null && !lease.bounded)
        lease.pending = this.store.pendingBytes();
      this.ctx.storage.transactionSync(() => this.store.commit(commit.parts, commit.pending, commit.offset));
      lease.touchedAt = Date.now();
      return true;
    }

    async renewWrite(leaseId: string): Promise<boolean> {
      if (this.lease?.id !== leaseId) return false;
      this.lease.touchedAt = Date.now();
      return true;
    }

    async endWrite(leaseId: string, ending: WriteEnding): Promise<WriteOutcome | null> {
      const lease = this.lease?.id === leaseId ? this.lease : null;
      try {
        return await this.serialized(async () => {
          // Terminated or expired while the writer streamed: answered like any other file that is gone (unknown).
          const file = this.ready ? this.store.read() : null;
          if (!file) return null;
          // Someone else writes now, or the object lost the lease (it restarted): the client asks where it stands.
          if (!lease || ending === "lost") return { kind: "offset_mismatch", file };
          if (ending === "too_long") {
            // What this body committed is taken back: R2 keeps the bytes of its parts until the same part numbers
            // are uploaded again, and complete() only uses the parts recorded here.
            if (file.offset !== lease.from) {
              // Only part commits move the offset before a body is refused (its rest is committed at its end); only
              // a body of unknown length is refused after one, and the first of them read the rows (commitWrite).
              const pending = lease.pending;
              if (!pending) throw new Error(`upload ${file.handle}: a refused body's first rows were never read`);
              this.ctx.storage.transactionSync(() => this.store.rollBack(lease.partCount, pending, lease.from));
            }
            return { kind: "too_long", file: this.store.read()! };
          }
          if (ending === "checksum_mismatch") return { kind: "checksum_mismatch", file };
          if (!received(file)) return { kind: ending === "done" ? "written" : "interrupted", file };
          // All bytes are in, whichever way this body ended: complete now.
          const digest = lease.digest;
          lease.digest = null;
          return this.complete(digest);
        });
      } finally {
        if (lease) {
          // Before the next writer goes on: it finds the digest and the part where this one left them (if they still
          // fit).
          const file = this.ready ? this.store.read() : null;
          const offset = file?.state === "uploading" ? file.offset : null;
          this.digest.putBack(lease.digest, offset);
          this.filling.putBack(lease.filling, offset);
          if (this.filling.offset !== null) this.buffers.trim(KEPT_BUFFERS - 1);
          lease.digest = null;
          lease.filling = null;
          this.endLease(lease);
        }
      }
    }

    async terminate(access: FileAccess): Promise<boolean> {
      return this.serialized(async () => {
        const file = this.owned(access, "upload");
        if (!file) return false;
        fileEvent("file_terminated", { handle: file.handle, state: file.state, offset: file.offset });
        // A writer still streaming finds its lease gone at its next commit and stops.
        if (this.lease) this.endLease(this.lease);
        await this.destroy(file);
        return true;
      });
    }

    async register(file: StoredFile): Promise<FileRecord> {
      return this.serialized(async () => {
        if (this.ready) await this.ctx.storage.deleteAll();
        this.ready = false;
        await this.insert(file, { declaredSha256: null, sha256: file.sha256, state: "ready", offset: file.size });
        return this.store.read()!;
      });
    }

    /** Expiry: an unfinished upload is aborted and its parts removed; a finished file is deleted. */
    override async alarm(): Promise<void> {
      await this.serialized(async () => {
        const file = this.ready ? this.store.read() : null;
        if (!file) return;
        if (Date.now() < file.expiresAt) {
          await this.ctx.storage.setAlarm(file.expiresAt);
          return;
        }
        fileEvent("file_expired", { handle: file.handle, state: file.state, offset: file.offset });
        await this.destroy(file);
      });
    }

    /**
     * Completes a fully received upload with `digest` when it was fed every byte (the last writer's, or the one kept
     * here when completion runs later); otherwise the stored bytes are digested, which the event reports.
     */
    private async complete(digest: RunningDigest | null = null): Promise<WriteOutcome> {
      const size = this.store.read()!.size;
      const running = this.digest.forCompletion(digest, size);
      const rehashed = running ? 0 : size;
      const started = Date.now();
      const outcome = await completeUpload(this.target(), running);
      // No part of this upload is written any more (a digest mismatch starts it over: the next writer allocates).
      this.buffers.clear();
      this.filling.clear();
      const fields = {
        handle: outcome.file.handle,
        size: outcome.file.size,
        rehashed: rehashed > 0,
        rehashedBytes: rehashed,
        ms: Date.now() - started,
      };
      if (outcome.kind === "digest_mismatch") fileEvent("file_digest_mismatch", { ...fields, actual: outcome.actual });
      else fileEvent("file_ready", { ...fields, sha256: outcome.file.sha256 });
      return outcome;
    }

    private endLease(lease: Lease): void {
      if (this.lease === lease) this.lease = null;
      // A lease that lapsed or was ended by a termination: its writer may still feed its digest, which no longer
      // stands for the upload. (A lease that ended normally gave it back first.)
      lease.digest?.discard();
      lease.digest = null;
      lease.release();
    }

    private async destroy(file: FileRecord): Promise<void> {
      const bucket = this.bucket();
      if (file.uploadId) await bucket.resumeMultipartUpload(objectKey(file.handle), file.uploadId).abort();
      await bucket.delete(objectKey(file.handle));
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.ready = false;
      this.digest.clear();
      this.buffers.clear();
      this.filling.clear();
    }

    /**
     * The file if `access` reaches it: the owner's principal always does; an upload signature only while the file
     * is uploading (a finished file is beyond what the URL handed to an uploader was for); a download signature
     * only to read. `change` marks writes and terminations, which a download signature never allows.
     */
    private owned(access: FileAccess, change?: "upload"): FileRecord | null {
      if (!this.ready) return null;
      const file = this.store.read();
      if (!file || file.handle !== access.handle) return null;
      if (Date.now() >= file.expiresAt) return null;
      if (access.principal !== undefined && access.principal === file.principal) return file;
      if (access.signed === "upload" && file.state === "uploading") return file;
      if (access.signed === "download" && change === undefined) return file;
      return null;
    }

    /** Writes the file's row and arms its expiry. */
    private async insert(
      file: Omit<NewFile, "sha256">,
      state: Pick<FileRecord, "declaredSha256" | "sha256" | "state" | "offset">,
    ): Promise<void> {
      this.init();
      const now = Date.now();
      const { handle, principal, name, mimeType, size } = file;
      const timing = { createdAt: now, expiresAt: expiryOf(now, file.ttlMs) };
      this.store.insert({
        handle,
        principal,
        name,
        mimeType,
        size,
        ...state,
        ...timing,
        partSize: partSizeFor(size),
        uploadId: null,
      });
      await this.ctx.storage.setAlarm(timing.expiresAt);
    }

    private init(): void {
      if (this.ready) return;
      applySchema(this.ctx.storage, FILE_SCHEMA, 0);
      this.ready = true;
    }

    private target() {
      return {
        store: this.store,
        storage: this.ctx.storage,
        bucket: this.bucket(),
        key: objectKey(this.store.read()!.handle),
      };
    }

    private bucket(): R2Bucket {
      const bucket = (this.env as Record<string, unknown>)[options.bucket] as R2Bucket | undefined;
      if (!bucket) throw new Error(`FileRunner: no R2 bucket binding named "${options.bucket}"`);
      return bucket;
    }

    private serialized<T>(fn: () => Promise<T>): Promise<T> {
      const run = this.queue.then(fn, fn);
      this.queue = run.catch(() => {});
      return run;
    }
  };
}
