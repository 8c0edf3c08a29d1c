// The page's upload records: what each upload is (its handle, upload URL, sha256, bytes confirmed, problem), kept in
// localStorage (the newest KEEP_UPLOADS with a handle), so an upload a reload interrupted is offered for resuming;
// and their subscription for React (useSyncExternalStore). The upload flows are files/upload.ts.
import type { Problem } from "../../shared/watcher-state.ts";

const UPLOADS_KEY = "durable-mcp-demo-client/uploads";
const KEEP_UPLOADS = 20;

export type UploadState = "hashing" | "requesting" | "uploading" | "verifying" | "ready" | "failed" | "interrupted";

export interface UploadRecord {
  /** The file handle once `file_upload_url` gave one; a local id before. */
  id: string;
  serverUrl: string;
  name: string;
  size: number;
  mimeType: string;
  lastModified: number;
  startedAt: string;
  state: UploadState;
  handle?: string;
  uploadUrl?: string;
  /** When the signed upload URL stops working (ISO). */
  expiresAt?: string;
  /** Hex sha256 of the file, computed in this browser. */
  sha256?: string;
  /** Bytes the server has confirmed (tus chunks, or `file_status` after a reload). */
  confirmed: number;
  /** Bytes the running upload has sent (the progress bar). */
  sent: number;
  /** false once the handle or its upload URL can no longer take bytes: the next step is a new upload. */
  resumable?: boolean;
  problem?: Problem;
}

export function load(): UploadRecord[] {
  try {
    const records = JSON.parse(localStorage.getItem(UPLOADS_KEY) ?? "[]") as UploadRecord[];
    return Array.isArray(records)
      ? records.filter((r) => r && typeof r.id === "string" && typeof r.name === "string")
      : [];
  } catch {
    return [];
  }
}

export class UploadRecords {
  protected records: UploadRecord[] = [];
  private listeners = new Set<() => void>();
  private version = 0;

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = () => this.version;

  all(): UploadRecord[] {
    return this.records;
  }

  /** The ready uploads of a server, newest first. */
  ready(serverUrl: string): UploadRecord[] {
    return this.records.filter((r) => r.serverUrl === serverUrl && r.state === "ready" && r.handle);
  }

  protected expired(record: UploadRecord): boolean {
    return record.expiresAt !== undefined && Date.parse(record.expiresAt) <= Date.now();
  }

  protected fail(id: string, problem: Problem, resumable: boolean): void {
    const record = this.find(id);
    this.patch(id, { state: "failed", problem, resumable: record?.handle ? resumable : false });
    this.persist();
  }

  protected find(id: string): UploadRecord | undefined {
    return this.records.find((r) => r.id === id);
  }

  protected patch(id: string, patch: Partial<UploadRecord>): void {
    this.records = this.records.map((r) => (r.id === id ? { ...r, ...patch } : r));
    this.changed();
  }

  protected persist(): void {
    try {
      const kept = this.records.filter((r) => r.handle).slice(0, KEEP_UPLOADS);
      localStorage.setItem(UPLOADS_KEY, JSON.stringify(kept.map((r) => ({ ...r, sent: r.confirmed }))));
    } catch {
      // storage full or disabled: the page still works, it just forgets on reload
    }
  }

  protected changed(): void {
    this.version++;
    for (const listener of this.listeners) listener();
  }
}
