/**
 * The SQLite state of one file: its metadata row, the R2 multipart parts already uploaded, and the bytes received
 * since the last full part (kept as rows of at most 1 MiB, under SQLite's 2 MB value limit). Together they are
 * everything an upload needs to resume after the client or the object goes away.
 */
import type { VersionedSchema } from "../storage/migrations.js";

export type FileState = "uploading" | "ready";

export interface FileRecord {
  handle: string;
  principal: string;
  name: string;
  mimeType: string;
  /** Upload-Length: the size the upload was declared with (the size of the file once ready). */
  size: number;
  /** The sha256 (hex) the creator declared; checked at completion. Null when none was declared. */
  declaredSha256: string | null;
  /** The sha256 (hex) of the stored bytes, once ready. */
  sha256: string | null;
  state: FileState;
  /** Bytes received and kept so far. */
  offset: number;
  partSize: number;
  uploadId: string | null;
  createdAt: number;
  expiresAt: number;
}

export const FILE_MIGRATIONS: readonly string[] = [
  `CREATE TABLE file (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     handle TEXT NOT NULL,
     principal TEXT NOT NULL,
     name TEXT NOT NULL,
     mime_type TEXT NOT NULL,
     size INTEGER NOT NULL,
     declared_sha256 TEXT,
     sha256 TEXT,
     state TEXT NOT NULL CHECK (state IN ('uploading', 'ready')),
     offset INTEGER NOT NULL,
     part_size INTEGER NOT NULL,
     upload_id TEXT,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE TABLE parts (part_number INTEGER PRIMARY KEY, etag TEXT NOT NULL);
   CREATE TABLE pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, bytes BLOB NOT NULL);`,
  // Held a software SHA-256 state at `offset` until the whole-file digest became native and in memory
  // (running-digest.ts); no longer read, and cleared by every commit. Kept: a migration is never taken back.
  `ALTER TABLE file ADD COLUMN hash_state BLOB;`,
];

/**
 * What FILE_MIGRATIONS leave on an empty database, made in one script for a new file's object
 * (storage/migrations.ts, `applySchema`). A migration appended above is made here too: test/storage/current-schema.test.ts
 * compares the two on real objects.
 */
const FILE_CURRENT = `CREATE TABLE file (
     singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
     handle TEXT NOT NULL,
     principal TEXT NOT NULL,
     name TEXT NOT NULL,
     mime_type TEXT NOT NULL,
     size INTEGER NOT NULL,
     declared_sha256 TEXT,
     sha256 TEXT,
     state TEXT NOT NULL CHECK (state IN ('uploading', 'ready')),
     offset INTEGER NOT NULL,
     part_size INTEGER NOT NULL,
     upload_id TEXT,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     hash_state BLOB
   );
   CREATE TABLE parts (part_number INTEGER PRIMARY KEY, etag TEXT NOT NULL);
   CREATE TABLE pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, bytes BLOB NOT NULL);`;

export const FILE_SCHEMA: VersionedSchema = { migrations: FILE_MIGRATIONS, current: FILE_CURRENT };

interface FileRow extends Record<string, SqlStorageValue> {
  hash_state: ArrayBuffer | null;
  handle: string;
  principal: string;
  name: string;
  mime_type: string;
  size: number;
  declared_sha256: string | null;
  sha256: string | null;
  state: string;
  offset: number;
  part_size: number;
  upload_id: string | null;
  created_at: number;
  expires_at: number;
}

export class FileStore {
  constructor(private readonly sql: SqlStorage) {}

  read(): FileRecord | null {
    const row = this.sql.exec<FileRow>("SELECT * FROM file").toArray()[0];
    return row ? fromRow(row) : null;
  }

  insert(file: FileRecord): void {
    this.sql.exec(
      `INSERT INTO file (singleton, handle, principal, name, mime_type, size, declared_sha256, sha256, state, offset,
         part_size, upload_id, created_at, expires_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      file.handle,
      file.principal,
      file.name,
      file.mimeType,
      file.size,
      file.declaredSha256,
      file.sha256,
      file.state,
      file.offset,
      file.partSize,
      file.uploadId,
      file.createdAt,
      file.expiresAt,
    );
  }

  setUploadId(uploadId: string | null): void {
    this.sql.exec("UPDATE file SET upload_id = ?", uploadId);
  }

  /** The upload is complete and verified. */
  markReady(sha256: string): void {
    this.sql.exec(
      "UPDATE file SET state = 'ready', sha256 = ?, offset = size, upload_id = NULL, hash_state = NULL",
      sha256,
    );
    this.sql.exec("DELETE FROM parts");
    this.sql.exec("DELETE FROM pending");
  }

  /** Back to an empty upload (after the whole-file digest did not match). */
  reset(): void {
    this.sql.exec(
      "UPDATE file SET offset = 0, upload_id = NULL, sha256 = NULL, state = 'uploading', hash_state = NULL",
    );
    this.sql.exec("DELETE FROM parts");
    this.sql.exec("DELETE FROM pending");
  }

  parts(): R2UploadedPart[] {
    return this.sql
      .exec<{ part_number: number; etag: string }>("SELECT part_number, etag FROM parts ORDER BY part_number")
      .toArray()
      .map((row) => ({ partNumber: row.part_number, etag: row.etag }));
  }

  partCount(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM parts").one().n;
  }

  /** A full part went to R2: record it, drop the buffered bytes it was made of, and move the offset. */
  commitPart(part: R2UploadedPart, offset: number): void {
    this.sql.exec("INSERT OR REPLACE INTO parts (part_number, etag) VALUES (?, ?)", part.partNumber, part.etag);
    this.sql.exec("DELETE FROM pending");
    this.sql.exec("UPDATE file SET offset = ?", offset);
  }

  /**
   * One writer's progress (run it in a transaction): `parts` recorded (when there are any, the pending rows were
   * their first bytes and go), `pending` rows appended, and the offset moved to `offset`.
   */
  commit(parts: R2UploadedPart[], pending: Uint8Array[], offset: number): void {
    for (const part of parts) {
      this.sql.exec("INSERT OR REPLACE INTO parts (part_number, etag) VALUES (?, ?)", part.partNumber, part.etag);
    }
    if (parts.length > 0) this.sql.exec("DELETE FROM pending");
    for (const row of pending) this.sql.exec("INSERT INTO pending (bytes) VALUES (?)", row);
    this.sql.exec("UPDATE file SET offset = ?, hash_state = NULL", offset);
  }

  /** Buffers received bytes that do not fill a part yet, and moves the offset past them. */
  appendPending(bytes: Uint8Array, offset: number): void {
    this.sql.exec("INSERT INTO pending (bytes) VALUES (?)", bytes);
    this.sql.exec("UPDATE file SET offset = ?", offset);
  }

  /**
   * Back to how a refused chunk found the upload: the parts after the first `partCount` forgotten, the pending rows
   * as they were, the offset where it was.
   */
  rollBack(partCount: number, pending: Uint8Array[], offset: number): void {
    this.sql.exec("DELETE FROM parts WHERE part_number > ?", partCount);
    this.sql.exec("DELETE FROM pending");
    for (const row of pending) this.sql.exec("INSERT INTO pending (bytes) VALUES (?)", row);
    this.sql.exec("UPDATE file SET offset = ?, hash_state = NULL", offset);
  }

  pendingBytes(): Uint8Array[] {
    return this.sql
      .exec<{ bytes: ArrayBuffer }>("SELECT bytes FROM pending ORDER BY seq")
      .toArray()
      .map((row) => new Uint8Array(row.bytes));
  }
}

function fromRow(row: FileRow): FileRecord {
  return {
    handle: row.handle,
    principal: row.principal,
    name: row.name,
    mimeType: row.mime_type,
    size: row.size,
    declaredSha256: row.declared_sha256,
    sha256: row.sha256,
    state: row.state as FileState,
    offset: row.offset,
    partSize: row.part_size,
    uploadId: row.upload_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}
