import type { McpServer as SdkMcpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { toFileView } from "./file-service.js";
import { isFileHandleShape } from "../ids.js";
import { TOOL_CHUNK_BYTES } from "../limits.js";
import { toBase64 } from "../util/encoding.js";
import { unknownFile } from "./file-envelopes.js";
import {
  decodeBase64,
  fail,
  fileTool,
  handleArgument,
  invalid,
  isRecord,
  newFileArguments,
  ok,
  readOnly,
  readyFile,
  readyResult,
  spec,
  writeResult,
  writes,
  type FileToolsRuntime,
} from "./file-tool-kit.js";

// The file tools that move bytes in base64 chunks through tool calls, for hosts that can only make tool calls.

/** `file_upload_open`: a new upload written through `file_upload_write`. */
export function uploadOpenTool(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  fileTool(
    server,
    "file_upload_open",
    {
      title: "Start a chunked upload through tool calls",
      description:
        `Creates a file handle to upload through file_upload_write in base64 chunks of at most ${TOOL_CHUNK_BYTES} ` +
        "bytes, for small and medium files. Prefer file_upload_url for large ones.",
      inputSchema: z.object(newFileArguments),
      annotations: writes,
    },
    async (args) => {
      const { files, principal } = runtime();
      const file = await files.open(principal, spec(args));
      return ok(
        { ...toFileView(file), chunkBytes: TOOL_CHUNK_BYTES },
        `Opened ${file.handle}; write from offset 0 in chunks of at most ${TOOL_CHUNK_BYTES} bytes.`,
      );
    },
  );
}

/** `file_upload_write`: one base64 chunk at an offset. */
export function uploadWriteTool(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  fileTool(
    server,
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
    async ({ handle, offset, data }) => {
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
    },
  );
}

/** `file_upload_commit`: the ready file, once every byte is in. */
export function uploadCommitTool(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  fileTool(
    server,
    "file_upload_commit",
    {
      title: "Finish a chunked upload",
      description: "Confirms that every byte arrived and the sha256 matched; returns the ready file.",
      inputSchema: z.object({ handle: handleArgument }),
      annotations: { ...writes, idempotentHint: true },
    },
    async ({ handle }) => {
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
    },
  );
}

/** `file_download_read`: one base64 chunk of a ready file. */
export function downloadReadTool(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  fileTool(
    server,
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
    async ({ handle, offset, length }) => {
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
    },
  );
}
