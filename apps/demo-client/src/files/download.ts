// Downloads for the page: the files a task's result names, and each one fetched through a signed
// \`file_download_url\` (asked by the page's agent and logged with the task) and checked against the sha256 the task
// reported before it is saved. The agent never handles file bytes.
import type { Json, JsonObject } from "../../shared/mcp.ts";
import { errorText } from "../../shared/mcp.ts";
import type { Problem } from "../../shared/watcher-state.ts";
import type { AgentTool } from "../agent-calls.ts";
import { formatBytes, sha256Hex, toolProblem } from "./format.ts";

/** The \`_meta\` key of a resource_link that names a durable-mcp-server file. */
export const FILE_META = "durable-mcp-server/file";

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
export async function download(
  tool: AgentTool,
  serverUrl: string,
  link: FileLink,
  taskId: string,
): Promise<Downloaded> {
  let issued: JsonObject;
  try {
    const result = await tool("fileDownloadUrl", [serverUrl, link.handle, taskId]);
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
