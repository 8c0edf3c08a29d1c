// Files for the page. Uploads: the sha256 is computed in this browser, `file_upload_url` (asked by the page's agent)
// gives a handle and a signed tus URL, tus-js-client sends the bytes from this browser in chunks, and `file_status`
// confirms the server verified them. The uploads
// (handle, upload URL, bytes confirmed) are kept in localStorage, so one a reload interrupted is offered for resuming:
// choose the same file again and tus continues from the server's offset. Downloads: `file_download_url` for a
// task's artifact (asked by the agent, logged with the task), fetched by this browser and checked against the sha256
// the task reported before it is saved. The agent never handles file bytes.
import { useSyncExternalStore } from "react";
import * as tus from "tus-js-client";
import { errorEnvelope, McpError, resultText, type Json, type JsonObject } from "../shared/mcp.ts";
import type { Problem } from "../shared/watcher-state.ts";
import { watcherTool } from "./watcher.ts";

export type { Problem };

/** The `_meta` key of a resource_link that names a durable-mcp-server file. */
export const FILE_META = "durable-mcp-server/file";
/** tus PATCH size: every confirmed chunk is kept by the server, so an interrupted upload resumes from there. */
export const CHUNK_BYTES = 1024 * 1024;
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

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}

/** Hex sha256 of some bytes (crypto.subtle: fine for the demo's sizes, the whole file is read into memory). */
export async function sha256Hex(data: Blob | ArrayBuffer): Promise<string> {
  const buffer = data instanceof Blob ? await data.arrayBuffer() : data;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", buffer));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** A failed tool result (`isError`) as a message and a next step: the error envelope's, or the result's text. */
export function toolProblem(result: JsonObject, fallbackNext: string): Problem {
  const envelope = errorEnvelope(result);
  const message =
    (typeof envelope?.message === "string" ? envelope.message : "") || resultText(result) || JSON.stringify(result);
  const code = typeof envelope?.code === "string" ? ` (${envelope.code})` : "";
  const hint = typeof envelope?.recoveryHint === "string" ? `${envelope.recoveryHint} ` : "";
  return { message: `${message}${code}`, next: `${hint}${fallbackNext}`.trim() };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What a failed tus upload means, from the server's answer (status and text) when there was one. */
function tusProblem(error: unknown): Problem & { resumable: boolean } {
  const response = error instanceof tus.DetailedError ? error.originalResponse : null;
  if (!response) {
    return {
      message: `The upload could not reach the server: ${errorText(error).split(", originated from")[0]}.`,
      next: "Check the connection and retry: the upload continues from the last byte the server confirmed.",
      resumable: true,
    };
  }
  const status = response.getStatus();
  const text = (response.getBody() ?? "").trim() || "no message";
  const message = `The server refused the upload (HTTP ${status}): ${text}.`;
  switch (status) {
    case 401:
      return {
        message,
        next: "The upload link expired: upload the file again (it gets a new handle).",
        resumable: false,
      };
    case 403:
    case 404:
      return {
        message,
        next: "The server no longer takes bytes for this handle (expired or removed): upload the file again.",
        resumable: false,
      };
    case 460:
      return {
        message,
        next: "The bytes that arrived do not match the file's sha256. Retry the upload; if it fails again, the file changed while it uploaded: choose it again.",
        resumable: true,
      };
    default:
      return {
        message,
        next: "Retry the upload; it continues from the last byte the server confirmed.",
        resumable: true,
      };
  }
}

function load(): UploadRecord[] {
  try {
    const records = JSON.parse(localStorage.getItem(UPLOADS_KEY) ?? "[]") as UploadRecord[];
    return Array.isArray(records)
      ? records.filter((r) => r && typeof r.id === "string" && typeof r.name === "string")
      : [];
  } catch {
    return [];
  }
}

let localIds = 0;

class UploadStore {
  private records: UploadRecord[] = [];
  /** The files picked in this page's lifetime (a reload loses them: the user chooses the file again). */
  private files = new Map<string, File>();
  private running = new Map<string, tus.Upload>();
  private listeners = new Set<() => void>();
  private version = 0;

  constructor() {
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
    for (const record of this.records) {
      if (record.state === "interrupted") setTimeout(() => void this.inspect(record.id), 0);
    }
  }

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

  /** Whether this page still holds the picked file (it does not after a reload). */
  hasFile(id: string): boolean {
    return this.files.has(id);
  }

  /** Hashes `file`, asks `file_upload_url` for a handle and a tus URL, and uploads it there. */
  async start(serverUrl: string, file: File, replacing?: string): Promise<void> {
    let id = `local-${Date.now()}-${localIds++}`;
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
      const result = await watcherTool("fileUploadUrl", [
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
      this.fail(id, this.rpcProblem(error, "file_upload_url"), false);
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

  /** After the last byte: the server checked the whole file's sha256 (`file_status` says ready, with the digest). */
  private async verify(id: string): Promise<void> {
    const record = this.find(id);
    if (!record?.handle) return;
    this.patch(id, { state: "verifying", confirmed: record.size, sent: record.size });
    this.persist();
    try {
      const result = await watcherTool("fileStatus", [record.serverUrl, record.handle]);
      if (result.isError === true) {
        this.fail(id, toolProblem(result, "Upload the file again."), false);
        return;
      }
      const view = (result.structuredContent ?? {}) as JsonObject;
      if (view.state !== "ready") {
        const offset = typeof view.offset === "number" ? view.offset : 0;
        this.fail(
          id,
          {
            message: `The upload finished, but the server has ${formatBytes(offset)} of ${formatBytes(record.size)} and says "${String(view.state)}".`,
            next: "Retry the upload: it continues from the server's offset.",
          },
          true,
        );
        this.patch(id, { confirmed: offset, sent: offset });
        return;
      }
      if (view.sha256 !== record.sha256) {
        this.fail(
          id,
          {
            message: `The server verified sha256 ${String(view.sha256)}, but this browser computed ${record.sha256}.`,
            next: "Upload the file again.",
          },
          false,
        );
        return;
      }
      this.patch(id, { state: "ready", problem: undefined });
      this.persist();
    } catch (error) {
      this.fail(id, this.rpcProblem(error, "file_status"), true);
    }
  }

  /** After a reload: how far an interrupted upload got, from `file_status`. */
  private async inspect(id: string): Promise<void> {
    const record = this.find(id);
    if (!record) return;
    if (!record.handle) {
      this.fail(
        id,
        {
          message: `The upload of ${record.name} was interrupted before it had a handle.`,
          next: "Upload the file again.",
        },
        false,
      );
      return;
    }
    const interrupted = `The upload of ${record.name} was interrupted: the page was reloaded or closed while it ran.`;
    try {
      const result = await watcherTool("fileStatus", [record.serverUrl, record.handle]);
      if (result.isError === true) {
        const problem = toolProblem(result, "Upload the file again (it gets a new handle), or discard this one.");
        this.fail(id, { message: `${interrupted} The server says: ${problem.message}`, next: problem.next }, false);
        return;
      }
      const view = (result.structuredContent ?? {}) as JsonObject;
      if (view.state === "ready") {
        // The last chunk arrived before the reload: nothing to resume.
        this.patch(id, { state: "ready", confirmed: record.size, sent: record.size, problem: undefined });
        this.persist();
        return;
      }
      const offset = typeof view.offset === "number" ? view.offset : record.confirmed;
      const expired = this.expired(record);
      this.patch(id, {
        state: "interrupted",
        confirmed: offset,
        sent: offset,
        resumable: !expired,
        problem: {
          message: `${interrupted} The server has ${formatBytes(offset)} of ${formatBytes(record.size)} (${offset} bytes).`,
          next: expired
            ? `Its upload link expired at ${new Date(record.expiresAt ?? 0).toLocaleTimeString()}: choose ${record.name} again to upload it as a new file, or discard it.`
            : `Choose ${record.name} again to resume from byte ${offset}, or discard it.`,
        },
      });
      this.persist();
    } catch (error) {
      const problem = this.rpcProblem(error, "file_status");
      this.patch(id, {
        problem: {
          message: `${interrupted} Whether any of it arrived is unknown: ${problem.message}`,
          next: `Choose ${record.name} again to resume once the server answers, or discard it.`,
        },
      });
    }
  }

  private rpcProblem(error: unknown, what: string): Problem {
    if (error instanceof McpError && error.kind === "unreachable") {
      return { message: error.message, next: "Check that the server is running, then retry." };
    }
    return {
      message: `${what} failed: ${errorText(error)}`,
      next: "Retry; if it keeps failing, check the server's log.",
    };
  }

  private expired(record: UploadRecord): boolean {
    return record.expiresAt !== undefined && Date.parse(record.expiresAt) <= Date.now();
  }

  private fail(id: string, problem: Problem, resumable: boolean): void {
    const record = this.find(id);
    this.patch(id, { state: "failed", problem, resumable: record?.handle ? resumable : false });
    this.persist();
  }

  private find(id: string): UploadRecord | undefined {
    return this.records.find((r) => r.id === id);
  }

  private patch(id: string, patch: Partial<UploadRecord>): void {
    this.records = this.records.map((r) => (r.id === id ? { ...r, ...patch } : r));
    this.changed();
  }

  private persist(): void {
    try {
      const kept = this.records.filter((r) => r.handle).slice(0, KEEP_UPLOADS);
      localStorage.setItem(UPLOADS_KEY, JSON.stringify(kept.map((r) => ({ ...r, sent: r.confirmed }))));
    } catch {
      // storage full or disabled: the page still works, it just forgets on reload
    }
  }

  private changed(): void {
    this.version++;
    for (const listener of this.listeners) listener();
  }
}

export const uploads = new UploadStore();

/** Re-renders the caller on every change of the uploads. */
export function useUploads(): UploadStore {
  useSyncExternalStore(uploads.subscribe, uploads.getVersion);
  return uploads;
}

// ---------------------------------------------------------------------------------------------------------------
// Files a task produced

export interface FileLink {
  handle: string;
  name: string;
  size?: number;
  mimeType?: string;
  /** The sha256 the task reported (hex). */
  sha256?: string;
  uri?: string;
}

function asObject(value: Json | undefined): JsonObject | undefined {
  return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
}

/**
 * The files a tool result names: its `resource_link` content with durable-mcp-server's file `_meta` (or a sha256
 * in the description), and `structuredContent.artifact`; one entry per handle.
 */
export function fileLinksOf(result: JsonObject | undefined): FileLink[] {
  const links = new Map<string, FileLink>();
  const add = (link: FileLink) => links.set(link.handle, { ...links.get(link.handle), ...link });
  for (const part of Array.isArray(result?.content) ? result.content : []) {
    const block = asObject(part);
    if (block?.type !== "resource_link") continue;
    const meta = asObject(asObject(block._meta)?.[FILE_META]);
    const described =
      typeof block.description === "string" ? /sha256 ([0-9a-f]{64})/.exec(block.description)?.[1] : undefined;
    const handle = typeof meta?.handle === "string" ? meta.handle : undefined;
    if (!handle) continue;
    add({
      handle,
      name: typeof block.name === "string" ? block.name : handle,
      size: typeof block.size === "number" ? block.size : undefined,
      mimeType: typeof block.mimeType === "string" ? block.mimeType : undefined,
      sha256: typeof meta?.sha256 === "string" ? meta.sha256 : described,
      uri: typeof block.uri === "string" ? block.uri : undefined,
    });
  }
  const artifact = asObject(asObject(result?.structuredContent)?.artifact);
  if (artifact && typeof artifact.handle === "string") {
    const known = links.get(artifact.handle);
    add({
      handle: artifact.handle,
      name: typeof artifact.name === "string" ? artifact.name : (known?.name ?? artifact.handle),
      size: typeof artifact.size === "number" ? artifact.size : known?.size,
      mimeType: typeof artifact.mimeType === "string" ? artifact.mimeType : known?.mimeType,
      sha256: typeof artifact.sha256 === "string" ? artifact.sha256 : known?.sha256,
      uri: typeof artifact.uri === "string" ? artifact.uri : known?.uri,
    });
  }
  return [...links.values()];
}

export type Downloaded = { ok: true; blob: Blob; sha256: string; size: number } | { ok: false; problem: Problem };

/**
 * `file_download_url` for the file (asked by the agent and logged with `taskId`), then its bytes, fetched and hashed
 * here: ok only when they match the sha256 the task reported (and the one file_download_url gave).
 */
export async function download(serverUrl: string, link: FileLink, taskId: string): Promise<Downloaded> {
  let issued: JsonObject;
  try {
    const result = await watcherTool("fileDownloadUrl", [serverUrl, link.handle, taskId]);
    if (result.isError === true) {
      return { ok: false, problem: toolProblem(result, "") };
    }
    issued = (result.structuredContent ?? {}) as JsonObject;
  } catch (error) {
    return {
      ok: false,
      problem: {
        message: `file_download_url failed: ${errorText(error)}`,
        next: "Check that the server runs, then download again.",
      },
    };
  }
  if (typeof issued.url !== "string") {
    return {
      ok: false,
      problem: {
        message: `file_download_url gave no url: ${JSON.stringify(issued).slice(0, 300)}`,
        next: "Download again.",
      },
    };
  }
  let bytes: ArrayBuffer;
  try {
    const response = await fetch(issued.url);
    if (!response.ok) {
      const text = (await response.text()).trim();
      return {
        ok: false,
        problem: {
          message: `The download URL answered HTTP ${response.status}: ${text || "no message"}.`,
          next: "Download again (it asks for a fresh URL).",
        },
      };
    }
    bytes = await response.arrayBuffer();
  } catch (error) {
    return {
      ok: false,
      problem: {
        message: `The download broke off: ${errorText(error)}.`,
        next: "Check the connection and download again.",
      },
    };
  }
  const sha256 = await sha256Hex(bytes);
  const expected = link.sha256 ?? (typeof issued.sha256 === "string" ? issued.sha256 : undefined);
  if (!expected) {
    return {
      ok: false,
      problem: { message: "Neither the task nor the server gave a sha256 to check the download against.", next: "" },
    };
  }
  if (sha256 !== expected || (typeof issued.sha256 === "string" && issued.sha256 !== expected)) {
    return {
      ok: false,
      problem: {
        message:
          `sha256 mismatch: the ${formatBytes(bytes.byteLength)} downloaded hash to ${sha256}, but the task reported ${expected}` +
          (typeof issued.sha256 === "string" && issued.sha256 !== expected
            ? ` and the server now reports ${issued.sha256}`
            : "") +
          ". The file was not saved.",
        next: "Download again; if it keeps failing, the file was changed or the transfer is being altered on the way.",
      },
    };
  }
  const type = link.mimeType ?? (typeof issued.mimeType === "string" ? issued.mimeType : "application/octet-stream");
  return { ok: true, blob: new Blob([bytes], { type }), sha256, size: bytes.byteLength };
}
