import type { McpServer as SdkMcpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { toFileView } from "./file-service.js";
import { unknownFile } from "./file-envelopes.js";
import type { FileRecord } from "../file-runner/index.js";
import {
  fail,
  fileTool,
  handleArgument,
  invalid,
  isRecord,
  iso,
  newFileArguments,
  ok,
  readOnly,
  readyFile,
  readyResult,
  spec,
  writes,
  type FileToolsRuntime,
} from "./file-tool-kit.js";

// The file tools that hand out URLs and metadata: the bytes move out of band (tus, ranged GET).

/** `file_upload_url`: a new upload (or an unfinished one again) and its tus URL. */
export function uploadUrlTool(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  fileTool(
    server,
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
    async (args) => {
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
    },
  );
}

/** `file_download_url`: a short-lived signed URL of a ready file. */
export function downloadUrlTool(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  fileTool(
    server,
    "file_download_url",
    {
      title: "Get a download URL for a file",
      description: "Returns a short-lived URL to download a ready file (supports Range), with its size and sha256.",
      inputSchema: z.object({ handle: handleArgument }),
      annotations: readOnly,
    },
    async ({ handle }) => {
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
    },
  );
}

/** `file_status`: a file's metadata and progress. */
export function statusTool(server: SdkMcpServer, runtime: () => FileToolsRuntime): void {
  fileTool(
    server,
    "file_status",
    {
      title: "Check a file",
      description: "Returns a file's metadata: name, size, sha256, state (uploading or ready) and bytes received.",
      inputSchema: z.object({ handle: handleArgument }),
      annotations: readOnly,
    },
    async ({ handle }) => {
      const caller = runtime();
      const file = await caller.files.status({ handle, principal: caller.principal });
      if (!file) return fail(unknownFile(handle));
      return file.state === "ready"
        ? readyResult(caller.files, file)
        : ok(toFileView(file), `${handle}: ${file.offset} of ${file.size} bytes received.`);
    },
  );
}
