// How the page's file flows put things into words: sizes, hex digests, and the problems (a message and a next step)
// of a failed tool result, a failed tus upload and a failed request of the agent.
import * as tus from "tus-js-client";
import { errorEnvelope, errorText, McpError, resultText, type JsonObject } from "../../shared/mcp.ts";
import type { Problem } from "../../shared/watcher-state.ts";

export type { Problem };

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

/** What a failed tus upload means, from the server's answer (status and text) when there was one. */
export function tusProblem(error: unknown): Problem & { resumable: boolean } {
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

/** What a failed request of the agent for the page means (file_upload_url, file_status). */
export function rpcProblem(error: unknown, what: string): Problem {
  if (error instanceof McpError && error.kind === "unreachable") {
    return { message: error.message, next: "Check that the server is running, then retry." };
  }
  return {
    message: `${what} failed: ${errorText(error)}`,
    next: "Retry; if it keeps failing, check the server's log.",
  };
}
