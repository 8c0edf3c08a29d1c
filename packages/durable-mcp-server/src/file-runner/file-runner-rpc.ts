import type { DurableObject } from "cloudflare:workers";
import type { FileAccess } from "./file-access.js";
import type { FileRecord } from "./file-store.js";
import type { FillingPart } from "./filling-part.js";

// The FileRunner's contract, apart from the class that implements it (file-runner.ts): what the Worker side (the file
// service, the tus route, step.files) and the shared chunk writer (upload.ts) speak to the object.

export interface NewFile {
  handle: string;
  principal: string;
  name: string;
  mimeType: string;
  size: number;
  /** Hex sha256 the bytes must have; null to accept whatever arrives (the digest is still computed). */
  sha256: string | null;
  ttlMs: number;
}

/** A file whose bytes are already in R2 (a task's artifact), registered under a handle. */
export interface StoredFile extends Omit<NewFile, "sha256"> {
  sha256: string;
}

/**
 * The RPC surface of a FileRunner. A PATCH's body is streamed to it (`write`), and it writes the bytes to R2 while
 * it digests them.
 * @example
 * ```ts
 * import type { FileRunnerRpc } from "durable-mcp-server";
 *
 * type Methods = keyof FileRunnerRpc;
 * const read: Methods = "status";
 * ```
 */
export interface FileRunnerRpc extends WriteCoordinator {
  /** Creates the upload. The same handle again returns the existing record if the spec matches, else null. */
  create(file: NewFile): Promise<FileRecord | null>;
  status(access: FileAccess): Promise<FileRecord | null>;
  /**
   * Appends `body` at `offset` from inside the object (for callers that hold only the stub, such as
   * `file_upload_write`); `checksum` is the digest the chunk must have, `length` its size when known (a chunk that
   * cannot fit is then refused whole, unread). Null when the file is unknown.
   */
  write(
    access: FileAccess,
    offset: number,
    body: ReadableStream<Uint8Array>,
    checksum: ChunkChecksum | null,
    length?: number | null,
  ): Promise<WriteOutcome | null>;
  /** Ends the upload or deletes the file; its bytes and parts go with it. */
  terminate(access: FileAccess): Promise<boolean>;
  /** Records a file written straight to R2; the same handle again replaces it (a step that ran again). */
  register(file: StoredFile): Promise<FileRecord>;
}

export interface FileRunnerOptions {
  /** Name of the R2 bucket binding. */
  bucket: string;
}

/**
 * The FileRunner Durable Object class `durableMcp(…, { files })` builds; export it from the Worker under its
 * binding's class name.
 * @example
 * ```ts
 * import { durableMcp, McpServer, type FileRunnerClass } from "durable-mcp-server";
 *
 * const mcp = durableMcp(() => new McpServer({ name: "files", version: "1.0.0" }), { files: true });
 * export const FileRunner: FileRunnerClass<unknown> = mcp.FileRunner;
 * ```
 */
export type FileRunnerClass<Env> = new (ctx: DurableObjectState, env: Env) => DurableObject<Env> & FileRunnerRpc;

/** Where a file's bytes live in the bucket. */
export function objectKey(handle: string): string {
  return `files/${handle}`;
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

/** What a writer gets from `beginWrite`: the upload as committed, and the lease it commits under. */
export interface WriteLease {
  id: string;
  file: FileRecord;
  /** Parts recorded so far; the next one is number `partCount + 1`. */
  partCount: number;
  /**
   * The bytes after the last part (already counted in `file.offset`): the start of the next part, as the pending rows
   * hold them. Empty when `filling` brings them.
   */
  pending: Uint8Array[];
  /**
   * The same bytes in the part buffer the writer before left in the FileRunner's memory (filling-part.ts), when it
   * holds exactly them: the writer fills on in it. Null for a writer outside the object, or after an eviction.
   */
  filling?: FillingPart | null;
}

export type BeginWrite = { kind: "lease"; lease: WriteLease } | { kind: "refused"; outcome: WriteOutcome };

/** A writer's progress: committed in one transaction, only under its lease and only from the offset it names. */
export interface WriteCommit {
  from: number;
  offset: number;
  parts: R2UploadedPart[];
  pending: Uint8Array[];
}

/** How a writer's body ended; "lost" when the lease was gone at a commit. */
export type WriteEnding = "done" | "interrupted" | "too_long" | "checksum_mismatch" | "lost";

/** The FileRunner's side of a write: one writer at a time, commits under its lease, completion at the end. */
export interface WriteCoordinator {
  /** Null when `access` does not reach the file; "refused" with the answer when no write may start. */
  beginWrite(access: FileAccess, offset: number, length: number | null): Promise<BeginWrite | null>;
  /** False when the lease is no longer this writer's or the offset moved: the writer must stop. */
  commitWrite(leaseId: string, commit: WriteCommit): Promise<boolean>;
  /** Keeps a slow writer's lease from lapsing between commits. */
  renewWrite(leaseId: string): Promise<boolean>;
  /** Releases the lease; completes the upload when every byte is in. */
  endWrite(leaseId: string, ending: WriteEnding): Promise<WriteOutcome | null>;
}
