import type { CallToolResult, McpServer as SdkMcpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { toolErrorResult, type ErrorEnvelope } from "../errors/envelope.js";
import { FileTooLargeError, toFileView, type FileService, type FileView } from "./file-service.js";
import { isFileHandleShape } from "../ids.js";
import { TOOL_CHUNK_BYTES } from "../limits.js";
import { FILE_META } from "../wire/meta-keys.js";
import { fromBase64, toBase64 } from "../util/encoding.js";
import { fileNotReady, unknownFile } from "./file-envelopes.js";
import type { FileRecord, WriteOutcome } from "../file-runner/index.js";

export interface FileToolsRuntime {
  principal: string;
  files: FileService;
}

/** The names hosts and models meet files by. */
export const FILE_TOOL_NAMES = [
  "file_upload_url",
  "file_download_url",
  "file_upload_open",
  "file_upload_write",
  "file_upload_commit",
  "file_download_read",
  "file_status",
] as const;

const handleArgument = z.string().describe("A file handle (file_…)");
const newFileArguments = {
  name: z.string().min(1).max(255).describe("File name, e.g. data.csv"),
  size: z.number().int().nonnegative().describe("Exact size in bytes"),
  sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/)
    .describe("Hex sha256 of the whole file; checked when the upload completes"),
  mimeType: z.string().min(1).max(255).optional().describe("Content type; default application/octet-stream"),
};

/**
 * The file tools: a model directs transfers and sees metadata (handle, size, sha256, progress), while bytes move
 * out of band through signed URLs, or in small base64 chunks for hosts that can only make tool calls.
 */
export function registerFileTools(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  const readOnly = { readOnlyHint: true, idempotentHint: true, openWorldHint: false };
  const writes = { readOnlyHint: false, destructiveHint: false, openWorldHint: false };

  server.registerTool(
    "file_upload_url",
    {
      title: "Get an upload URL for a file",
      description:
        "Creates a file handle and returns a tus 1.0.0 upload URL for it, valid until the upload expires " +
        "(expiresAt). Give the URL to the host or user to upload the bytes (any tus client resumes interrupted " +
        "uploads); then use the handle. To get the URL of an unfinished upload again, pass only its `handle`.",
      inputSchema: z.object({
        name: newFileArguments.name.optional(),
        size: newFileArguments.size.optional(),
        sha256: newFileArguments.sha256.optional(),
        mimeType: newFileArguments.mimeType,
        handle: handleArgument.optional().describe("An unfinished upload to resume, instead of a new file"),
      }),
      annotations: writes,
    },
    async (args) =>
      guard(async () => {
        const { files, principal } = runtime();
        let file: FileRecord;
        if (args.handle !== undefined) {
          const found = await files.status({ handle: args.handle, principal });
          if (!found) return fail(unknownFile(args.handle));
          if (found.state === "ready") {
            return fail({
              code: "already_final",
              message: `${args.handle} is already complete; nothing is left to upload.`,
              retryable: false,
              recoveryHint: "Use the handle as it is, or file_download_url to read it.",
              param: "handle",
            });
          }
          file = found;
        } else {
          const { name, size, sha256 } = args;
          if (name === undefined || size === undefined || sha256 === undefined) {
            return fail(invalid("name", "a new file needs name, size and sha256 (or pass the handle of an upload)"));
          }
          file = await files.open(principal, spec({ name, size, sha256, mimeType: args.mimeType }));
        }
        const url = await files.uploadUrl(file);
        return ok(
          {
            handle: file.handle,
            uploadUrl: url,
            offset: file.offset,
            // The URL lives as long as the upload: both end at once.
            expiresAt: iso(file.expiresAt),
            protocol: "tus 1.0.0",
          },
          `Upload ${file.name} (${file.size} bytes, ${file.offset} received) with a tus client to the uploadUrl; ` +
            `the handle is ${file.handle}.`,
        );
      }),
  );

  server.registerTool(
    "file_download_url",
    {
      title: "Get a download URL for a file",
      description: "Returns a short-lived URL to download a ready file (supports Range), with its size and sha256.",
      inputSchema: z.object({ handle: handleArgument }),
      annotations: readOnly,
    },
    async ({ handle }) =>
      guard(async () => {
        const { files } = runtime();
        const file = await readyFile(runtime(), handle);
        if (!isRecord(file)) return file;
        const { url, expiresAt } = await files.downloadUrl(handle);
        return ok(
          {
            handle,
            url,
            size: file.size,
            sha256: file.sha256,
            name: file.name,
            mimeType: file.mimeType,
            expiresAt: iso(expiresAt),
          },
          `Download ${file.name} (${file.size} bytes, sha256 ${file.sha256}) from the url before it expires.`,
        );
      }),
  );

  server.registerTool(
    "file_upload_open",
    {
      title: "Start a chunked upload through tool calls",
      description:
        `Creates a file handle to upload through file_upload_write in base64 chunks of at most ${TOOL_CHUNK_BYTES} ` +
        "bytes, for small and medium files. Prefer file_upload_url for large ones.",
      inputSchema: z.object(newFileArguments),
      annotations: writes,
    },
    async (args) =>
      guard(async () => {
        const { files, principal } = runtime();
        const file = await files.open(principal, spec(args));
        return ok(
          { ...toFileView(file), chunkBytes: TOOL_CHUNK_BYTES },
          `Opened ${file.handle}; write from offset 0 in chunks of at most ${TOOL_CHUNK_BYTES} bytes.`,
        );
      }),
  );

  server.registerTool(
    "file_upload_write",
    {
      title: "Write a chunk of a file",
      description:
        "Appends base64 `data` at `offset` (the file's current offset). A wrong offset returns the right one in " +
        "error.partial.cursor. The upload completes (and its sha256 is checked) when the last byte arrives.",
      inputSchema: z.object({
        handle: handleArgument,
        offset: z.number().int().nonnegative(),
        data: z.string().describe("base64 bytes"),
      }),
      annotations: { ...writes, idempotentHint: false },
    },
    async ({ handle, offset, data }) =>
      guard(async () => {
        const caller = runtime();
        const bytes = decodeBase64(data);
        if (!bytes) return fail(invalid("data", "data is not valid base64"));
        if (bytes.byteLength > TOOL_CHUNK_BYTES) {
          return fail(invalid("data", `a chunk may be at most ${TOOL_CHUNK_BYTES} bytes; split it`));
        }
        if (!isFileHandleShape(handle)) return fail(unknownFile(handle));
        // With its length known, a chunk that does not fit is refused whole.
        const outcome = await caller.files
          .runner(handle)
          .write({ handle, principal: caller.principal }, offset, new Response(bytes).body!, null, bytes.byteLength);
        if (!outcome) return fail(unknownFile(handle));
        return writeResult(outcome, offset);
      }),
  );

  server.registerTool(
    "file_upload_commit",
    {
      title: "Finish a chunked upload",
      description: "Confirms that every byte arrived and the sha256 matched; returns the ready file.",
      inputSchema: z.object({ handle: handleArgument }),
      annotations: { ...writes, idempotentHint: true },
    },
    async ({ handle }) =>
      guard(async () => {
        const caller = runtime();
        const file = await caller.files.status({ handle, principal: caller.principal });
        if (!file) return fail(unknownFile(handle));
        if (file.state !== "ready") {
          return fail({
            code: "upload_incomplete",
            message: `${handle} has ${file.offset} of ${file.size} bytes.`,
            retryable: true,
            recoveryHint: `Write the remaining bytes from offset ${file.offset}, then commit again.`,
            param: "handle",
            partial: { cursor: file.offset },
          });
        }
        return readyResult(caller.files, file);
      }),
  );

  server.registerTool(
    "file_download_read",
    {
      title: "Read a chunk of a file",
      description: `Returns up to ${TOOL_CHUNK_BYTES} bytes of a ready file at \`offset\`, base64-encoded.`,
      inputSchema: z.object({
        handle: handleArgument,
        offset: z.number().int().nonnegative(),
        length: z.number().int().positive().max(TOOL_CHUNK_BYTES),
      }),
      annotations: readOnly,
    },
    async ({ handle, offset, length }) =>
      guard(async () => {
        const caller = runtime();
        const file = await readyFile(caller, handle);
        if (!isRecord(file)) return file;
        if (offset > file.size) {
          return fail({
            code: "offset_out_of_range",
            message: `offset ${offset} is past the end of ${handle} (${file.size} bytes).`,
            retryable: true,
            recoveryHint: `Read from an offset below ${file.size}.`,
            param: "offset",
            partial: { cursor: file.size },
          });
        }
        const count = Math.min(length, file.size - offset);
        const bytes = await caller.files.read(file, offset, count);
        const next = offset + count;
        return ok(
          { handle, offset, length: count, data: toBase64(bytes), nextOffset: next, eof: next === file.size },
          `${count} bytes of ${handle} at ${offset}${next === file.size ? " (end of file)" : `; next offset ${next}`}.`,
        );
      }),
  );

  server.registerTool(
    "file_status",
    {
      title: "Check a file",
      description: "Returns a file's metadata: name, size, sha256, state (uploading or ready) and bytes received.",
      inputSchema: z.object({ handle: handleArgument }),
      annotations: readOnly,
    },
    async ({ handle }) =>
      guard(async () => {
        const caller = runtime();
        const file = await caller.files.status({ handle, principal: caller.principal });
        if (!file) return fail(unknownFile(handle));
        return file.state === "ready"
          ? readyResult(caller.files, file)
          : ok(toFileView(file), `${handle}: ${file.offset} of ${file.size} bytes received.`);
      }),
  );
}

/**
 * `resource_link` content for a ready file (a FileRef from `step.files.write`, say): what a tool result returns so a
 * host can fetch the file with the owner's credentials, or the model can ask `file_download_url` for a signed URL.
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

function readyResult(files: FileService, file: FileRecord): CallToolResult {
  const view = toFileView(file);
  return {
    content: [
      { type: "text", text: `${file.handle} is ready: ${file.name}, ${file.size} bytes, sha256 ${file.sha256}.` },
      fileLink({ ...view, uri: files.fileUrl(file.handle) }),
    ],
    structuredContent: view as unknown as Record<string, unknown>,
  };
}

function writeResult(outcome: WriteOutcome, offset: number): CallToolResult {
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

async function readyFile(caller: FileToolsRuntime, handle: string): Promise<FileRecord | CallToolResult> {
  const file = await caller.files.status({ handle, principal: caller.principal });
  if (!file) return fail(unknownFile(handle));
  if (file.state !== "ready") {
    return fail(fileNotReady(file, "Finish the upload first; check progress with file_status."));
  }
  return file;
}

function isRecord(value: FileRecord | CallToolResult): value is FileRecord {
  return "handle" in value && "state" in value && !("content" in value);
}

/** Failures of the bindings or the bucket become the envelope too, never a bare exception. */
async function guard(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
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

function spec(args: { name: string; size: number; sha256: string; mimeType?: string }) {
  return {
    name: args.name,
    size: args.size,
    sha256: args.sha256.toLowerCase(),
    mimeType: args.mimeType ?? "application/octet-stream",
  };
}

function invalid(param: string, message: string): ErrorEnvelope {
  return { code: "invalid_param", message, retryable: true, recoveryHint: `Fix ${param} and call again.`, param };
}

function ok(data: Record<string, unknown> | FileView, text: string): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: data as Record<string, unknown> };
}

function fail(envelope: ErrorEnvelope): CallToolResult {
  return toolErrorResult(envelope);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Canonical base64 only (padded, no whitespace): a tool argument is checked, not repaired. */
function decodeBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  return fromBase64(text);
}
