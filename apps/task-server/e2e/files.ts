// File transfer for the e2e tests: plain tus 1.0.0 PATCHes and downloads with fetch, and sha256 with node:crypto.
import { createHash } from "node:crypto";

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Sends `bytes` to a tus upload URL in one PATCH; returns the new offset. */
export async function tusPatch(uploadUrl: string, bytes: Uint8Array, offset = 0): Promise<number> {
  const response = await fetch(uploadUrl, {
    method: "PATCH",
    headers: {
      "Tus-Resumable": "1.0.0",
      "Upload-Offset": String(offset),
      "Content-Type": "application/offset+octet-stream",
    },
    body: bytes,
  });
  if (response.status !== 204) throw new Error(`PATCH answered ${response.status}: ${await response.text()}`);
  return Number(response.headers.get("Upload-Offset"));
}

export async function download(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

/** A CSV of `rows` rows: an id, a text column and two numeric ones. */
export function sampleCsv(rows: number): string {
  const lines = ["id,city,temperature,rainfall"];
  for (let i = 1; i <= rows; i++) {
    lines.push(`${i},"City ${i % 7}, North",${((i * 37) % 40) - 5}.5,${(i * 13) % 90}`);
  }
  return `${lines.join("\n")}\n`;
}

/** A tool result, or a task's `result`, as these tests read it. */
export interface ToolResult {
  content: Array<Record<string, any>>;
  structuredContent: Record<string, any>;
  isError?: boolean;
}
