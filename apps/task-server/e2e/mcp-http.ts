// The demo's side of the raw-HTTP e2e tests: their client identity, and what the demo's tools say. The protocol
// plumbing (JSON-RPC over fetch, envelope, SSE, task calls) is @durable-mcp/test-harness.
import { randomBytes } from "node:crypto";
import { McpHttpClient } from "@durable-mcp/test-harness";

export const CLIENT_INFO = { name: "demo-e2e", version: "1.0.0" };

/** A raw MCP client of the demo's endpoint, introducing itself as the e2e tests. */
export function demoClient(url: string): McpHttpClient {
  return new McpHttpClient(url, { clientInfo: CLIENT_INFO });
}

/** A well-formed task id (32 base64url characters, like the server's) that no task has. */
export function randomTaskId(): string {
  return randomBytes(24).toString("base64url");
}

/** The N of a "rendered N/M pages" status message of `send_report`, or null. */
export function renderedPages(statusMessage: unknown): number | null {
  const match = typeof statusMessage === "string" ? /^rendered (\d+)\/\d+ pages$/.exec(statusMessage) : null;
  return match ? Number(match[1]) : null;
}

/** The envelope `export_contacts` ends with for the bucket "contacts-backup", on every path. */
export const UNKNOWN_BUCKET_ERROR = {
  code: "unknown_bucket",
  message: 'There is no archive bucket named "contacts-backup".',
  retryable: false,
  recoveryHint: "Start export_contacts again with bucket set to one of: contacts-archive, contacts-archive-eu.",
  param: "bucket",
  partial: { completedSteps: ["export batch 1", "export batch 2", "find bucket"] },
};
