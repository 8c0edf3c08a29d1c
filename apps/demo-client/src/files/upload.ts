// Uploads for the page: the sha256 is computed in this browser, `file_upload_url` (asked by the page's agent) gives a
// handle and a signed tus URL, tus-js-client sends the bytes from this browser in chunks, and `file_status` confirms
// the server verified them. The records (files/records.ts) survive a reload, so an interrupted upload is offered for
// resuming: choose the same file again and tus continues from the server's offset. The agent never handles bytes.
import { createContext, useContext, useSyncExternalStore } from "react";
import * as tus from "tus-js-client";
import type { JsonObject } from "../../shared/mcp.ts";
import type { Problem } from "../../shared/watcher-state.ts";
import type { AgentTool } from "../agent-calls.ts";
import { formatBytes, rpcProblem, sha256Hex, toolProblem, tusProblem } from "./format.ts";
import { UploadChecks } from "./checks.ts";
import { load, type UploadRecord } from "./records.ts";

export type { UploadRecord, UploadState } from "./records.ts";

/** tus PATCH size: every confirmed chunk is kept by the server, so an interrupted upload resumes from there. */
export const CHUNK_BYTES = 1024 * 1024;

export class UploadStore extends UploadChecks {
  /** The files picked in this page's lifetime (a reload loses them: the user chooses the file again). */
  private files = new Map<string, File>();
  private running = new Map<string, tus.Upload>();
  /** Numbers the local ids of uploads that have no handle yet. */
  private localIds = 0;
  private checkedInterrupted = false;

  /** `tool`: the session's MCP requests through its agent (file_upload_url, file_status). */
  constructor(tool: AgentTool) {
    super(tool);
    // Whatever was still moving when the page went away is interrupted now; the server says how far it got.
    this.records = load().map((record) =>
      ["hashing", "requesting", "uploading", "verifying"].includes(record.state)
        ? {
            ...record,
            state: "interrupted",
            sent: record.confirmed,
            problem: {
              message: `The upload of ${record.name} was interrupted: the page was reloaded or closed while it ran (${formatBytes(record.confirmed)} of ${formatBytes(record.size)} confirmed then).`,
              next: "Checking with the server how much arrived…",
            },
          }
        : record,
    );
  }

  /** Asks the server how far each upload a reload interrupted got (once; the page calls it when it mounts). */
  checkInterrupted(): void {
    if (this.checkedInterrupted) return;
    this.checkedInterrupted = true;
    for (const record of this.records) {
      if (record.state === "interrupted") void this.inspect(record.id);
    }
  }

  /** Whether this page still holds the picked file (it does not after a reload). */
  hasFile(id: string): boolean {
    return this.files.has(id);
  }

  /** Hashes `file`, asks `file_upload_url` for a handle and a tus URL, and uploads it there. */
  async start(serverUrl: string, file: File, replacing?: string): Promise<void> {
    let id = `local-${Date.now()}-${this.localIds++}`;
    const base: UploadRecord = {
      id,
      serverUrl,
      name: file.name,
      size: file.size,
      mimeType: file.type || "application/octet-stream",
      lastModified: file.lastModified,
      startedAt: new Date().toISOString(),
      state: "hashing",
      confirmed: 0,
      sent: 0,
    };
    if (replacing) this.remove(replacing);
    this.records = [base, ...this.records];
    this.files.set(id, file);
    this.changed();
    try {
      const sha256 = await sha256Hex(file);
      this.patch(id, { sha256, state: "requesting" });
      const result = await this.tool("fileUploadUrl", [
        serverUrl,
        { name: file.name, size: file.size, sha256, mimeType: base.mimeType },
      ]);
      if (result.isError === true) {
        this.fail(
          id,
          toolProblem(result, "Choose another file, or fix what the server named and upload again."),
          false,
        );
        return;
      }
      const issued = (result.structuredContent ?? {}) as JsonObject;
      const { handle, uploadUrl, expiresAt } = issued;
      if (typeof handle !== "string" || typeof uploadUrl !== "string") {
        this.fail(
          id,
          {
            message: `file_upload_url answered without a handle and an uploadUrl: ${JSON.stringify(result).slice(0, 300)}`,
            next: "This server's file tools are not the ones this page knows (durable-mcp-server's).",
          },
          false,
        );
        return;
      }
      // From here on the record is the handle's, and is kept across reloads.
      this.files.delete(id);
      this.files.set(handle, file);
      this.records = this.records.map((r) =>
        r.id === id
          ? {
              ...r,
              id: handle,
              handle,
              uploadUrl,
              expiresAt: typeof expiresAt === "string" ? expiresAt : undefined,
              resumable: true,
            }
          : r,
      );
      id = handle;
      this.persist();
      this.changed();
      this.send(handle);
    } catch (error) {
      this.fail(id, rpcProblem(error, "file_upload_url"), false);
    }
  }

  /**
   * Retries a failed or interrupted upload with the file this page holds: from the server's offset when the handle
   * can still take bytes, otherwise as a new upload (a new handle).
   */
  retry(id: string): void {
    const record = this.find(id);
    const file = this.files.get(id);
    if (!record || !file) return;
    if (record.handle && record.uploadUrl && record.resumable !== false && !this.expired(record)) {
      this.patch(id, { problem: undefined });
      this.send(id);
    } else {
      void this.start(record.serverUrl, file, id);
    }
  }

  /** After a reload: the user chose a file to resume `id` with; it must be the same file (name, size, sha256). */
  async resume(id: string, file: File): Promise<void> {
    const record = this.find(id);
    if (!record) return;
    const notSame = (why: string): Problem => ({
      message: `${file.name} is not the file this upload was for (${why}).`,
      next: `Choose ${record.name} (${formatBytes(record.size)}) to resume, or discard this upload and upload the other file as a new one.`,
    });
    if (file.name !== record.name || file.size !== record.size) {
      this.patch(id, {
        problem: notSame(
          `${file.name}, ${formatBytes(file.size)}; expected ${record.name}, ${formatBytes(record.size)}`,
        ),
      });
      return;
    }
    this.patch(id, { problem: { message: `Checking that ${file.name} is the same file (sha256)…`, next: "" } });
    const sha256 = await sha256Hex(file);
    if (record.sha256 && sha256 !== record.sha256) {
      this.patch(id, { problem: notSame(`its sha256 is ${sha256}, the upload's is ${record.sha256}`) });
      return;
    }
    this.files.set(id, file);
    this.retry(id);
  }

  /** Stops an upload if it runs and forgets it (the server drops an unfinished handle when it expires). */
  remove(id: string): void {
    void this.running.get(id)?.abort();
    this.running.delete(id);
    this.files.delete(id);
    this.records = this.records.filter((r) => r.id !== id);
    this.persist();
    this.changed();
  }

  private send(id: string): void {
    const record = this.find(id);
    const file = this.files.get(id);
    if (!record?.uploadUrl || !file) return;
    void this.running.get(id)?.abort();
    this.patch(id, { state: "uploading", sent: record.confirmed, problem: undefined });
    this.persist();
    const upload = new tus.Upload(file, {
      uploadUrl: record.uploadUrl,
      chunkSize: CHUNK_BYTES,
      retryDelays: [0, 1000, 3000],
      // This page keeps the handle and the upload URL itself (localStorage), so tus-js-client need not.
      storeFingerprintForResuming: false,
      onProgress: (sent) => this.patch(id, { sent }),
      onChunkComplete: (_chunk, accepted) => {
        this.patch(id, { confirmed: accepted, sent: accepted });
        this.persist();
      },
      onSuccess: () => {
        this.running.delete(id);
        void this.verify(id);
      },
      onError: (error) => {
        this.running.delete(id);
        const problem = tusProblem(error);
        this.fail(id, { message: problem.message, next: problem.next }, problem.resumable);
      },
    });
    this.running.set(id, upload);
    upload.start();
  }
}

/** The session's uploads, provided once at the top of the page (App) to every view below it. */
export const UploadsContext = createContext<UploadStore | undefined>(undefined);

/** The session's uploads; re-renders the caller on every change of them. */
export function useUploads(): UploadStore {
  const uploads = useContext(UploadsContext);
  if (!uploads) throw new Error("useUploads outside <App>");
  useSyncExternalStore(uploads.subscribe, uploads.getVersion);
  return uploads;
}
