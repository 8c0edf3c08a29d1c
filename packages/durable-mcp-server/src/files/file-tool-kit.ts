import type { CallToolResult, McpServer as SdkMcpServer, ToolAnnotations } from "@modelcontextprotocol/server";
import * as z from "zod";
import { toolErrorResult, type ErrorEnvelope } from "../errors/envelope.js";
import { FileTooLargeError, toFileView, type FileService, type FileView } from "./file-service.js";
import { FILE_META } from "../wire/meta-keys.js";
import { fromBase64 } from "../util/encoding.js";
import { fileNotReady, unknownFile } from "./file-envelopes.js";
import type { FileRecord, WriteOutcome } from "../file-runner/index.js";

// What every file tool is built from: the registration shape (`fileTool`), the shared arguments and annotations, and
// the results and envelopes the tools answer with.

export interface FileToolsRuntime {
  principal: string;
  files: FileService;
}

export const readOnly = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };
export const writes = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

export const handleArgument = z.string().describe("A file handle (file_…)");
export const newFileArguments = {
  name: z.string().min(1).max(255).describe("File name, e.g. data.csv"),
  size: z.number().int().nonnegative().describe("Exact size in bytes"),
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .describe("Hex sha256 of the whole file; checked when the upload completes"),
  mimeType: z.string().min(1).max(255).optional().describe("Content type; default application/octet-stream"),
};

/**
 * Registers one file tool: its handler runs under `guard`, so a failure of the bindings or the bucket is answered
 * with the envelope too.
 */
export function fileTool<Schema extends z.ZodObject>(
  server: SdkMcpServer,
  name: string,
  config: { title: string; description: string; inputSchema: Schema; annotations: ToolAnnotations },
  run: (args: z.output<Schema>) => Promise<CallToolResult>,
): void {
  const handler = (args: z.output<Schema>) => guard(() => run(args));
  // The SDK's callback type is a conditional type over the schema, which a generic schema leaves unresolved; `run`
  // is typed by the schema above.
  server.registerTool(name, config, handler as never);
}

/**
 * `resource_link` content for a ready file (a FileRef from `step.files.write`, say): what a tool result returns so a
 * host can fetch the file with the owner's credentials, or the model can ask `file_download_url` for a signed URL.
 * @param file - The file (a FileRef from `step.files.write`, or a FileView with its `uri`).
 * @returns The `resource_link` content block, with the handle and digest under `_meta["durable-mcp-server/file"]`.
 * @example
 * ```ts
 * import { fileLink, type Step } from "durable-mcp-server";
 *
 * async function export_(step: Step) {
 *   const file = await step.files.write("write csv", { name: "report.csv", mimeType: "text/csv", body: "a,b\n1,2\n" });
 *   return { content: [fileLink(file)] };
 * }
 * ```
 */
export function fileLink(file: Pick<FileView, "handle" | "name" | "mimeType" | "size" | "sha256"> & { uri: string }) {
  return {
    type: "resource_link" as const,
    uri: file.uri,
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    description: `sha256 ${file.sha256}`,
    _meta: { [FILE_META]: { handle: file.handle, sha256: file.sha256 } },
  };
}

export function readyResult(files: FileService, file: FileRecord): CallToolResult {
  const view = toFileView(file);
  return {
    content: [
      { type: "text", text: `${file.handle} is ready: ${file.name}, ${file.size} bytes, sha256 ${file.sha256}.` },
      fileLink({ ...view, uri: files.fileUrl(file.handle) }),
    ],
    structuredContent: view as unknown as Record<string, unknown>,
  };
}

export function writeResult(outcome: WriteOutcome, offset: number): CallToolResult {
  const file = outcome.file;
  switch (outcome.kind) {
    case "written":
    case "interrupted":
      return ok(
        toFileView(file),
        file.state === "ready"
          ? `${file.handle} is complete and verified (sha256 ${file.sha256}).`
          : `${file.offset} of ${file.size} bytes received; write next at offset ${file.offset}.`,
      );
    case "offset_mismatch":
      return fail({
        code: "offset_mismatch",
        message: `offset ${offset} is not where ${file.handle} continues (${file.offset}).`,
        retryable: true,
        recoveryHint: `Write from offset ${file.offset}.`,
        param: "offset",
        partial: { cursor: file.offset },
      });
    case "checksum_mismatch":
      return fail({
        code: "checksum_mismatch",
        message: "the chunk does not match its checksum; it was discarded.",
        retryable: true,
        recoveryHint: `Send the chunk again from offset ${file.offset}.`,
        param: "data",
        partial: { cursor: file.offset },
      });
    case "too_long":
      return fail({
        code: "too_long",
        message: `the chunk runs past the declared size (${file.size} bytes); none of it was kept.`,
        retryable: true,
        recoveryHint: `Send only the remaining ${file.size - file.offset} bytes from offset ${file.offset}.`,
        param: "data",
        partial: { cursor: file.offset },
      });
    case "digest_mismatch":
      return fail({
        code: "digest_mismatch",
        message: `the uploaded bytes hash to ${outcome.actual}, not the declared sha256; the upload was reset.`,
        retryable: true,
        recoveryHint: "Check the file and its sha256, then write it again from offset 0.",
        param: "sha256",
        partial: { cursor: 0 },
      });
  }
}

export async function readyFile(caller: FileToolsRuntime, handle: string): Promise<FileRecord | CallToolResult> {
  const file = await caller.files.status({ handle, principal: caller.principal });
  if (!file) return fail(unknownFile(handle));
  if (file.state !== "ready") {
    return fail(fileNotReady(file, "Finish the upload first; check progress with file_status."));
  }
  return file;
}

export function isRecord(value: FileRecord | CallToolResult): value is FileRecord {
  return "handle" in value && "state" in value && !("content" in value);
}

/** Failures of the bindings or the bucket become the envelope too, never a bare exception. */
export async function guard(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof FileTooLargeError) {
      return fail({
        code: "file_too_large",
        message: error.message,
        retryable: false,
        recoveryHint: `Split the data into files of at most ${error.maxSize} bytes.`,
        param: "size",
      });
    }
    console.error("file tool failed", { error: error instanceof Error ? error.stack : String(error) });
    return fail({
      code: "internal",
      message: "The file service failed.",
      retryable: true,
      recoveryHint: "Try again shortly; if it keeps failing, tell the server's operator.",
    });
  }
}

export function spec(args: { name: string; size: number; sha256: string; mimeType?: string }) {
  return {
    name: args.name,
    size: args.size,
    sha256: args.sha256.toLowerCase(),
    mimeType: args.mimeType ?? "application/octet-stream",
  };
}

export function invalid(param: string, message: string): ErrorEnvelope {
  return { code: "invalid_param", message, retryable: true, recoveryHint: `Fix ${param} and call again.`, param };
}

export function ok(data: Record<string, unknown> | FileView, text: string): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: data as Record<string, unknown> };
}

export function fail(envelope: ErrorEnvelope): CallToolResult {
  return toolErrorResult(envelope);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Canonical base64 only (padded, no whitespace): a tool argument is checked, not repaired. */
export function decodeBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  return fromBase64(text);
}
