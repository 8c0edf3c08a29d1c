// Vitest globalSetup: serves the demo Worker (../../wrangler.jsonc) with `wrangler dev` on a fresh persist dir, through
// @durable-mcp/test-harness. The tests get the server's spec through `inject("wrangler")`: its URL, and what
// `WranglerDev.attach` needs to crash and restart it on the same persist dir from a test file.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { startWranglerDev, workspaceRoot, type WranglerDevSpec } from "@durable-mcp/test-harness";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    wrangler: WranglerDevSpec;
  }
}

const DEFAULT_PORT = 8791;

export default async function setup(project: TestProject) {
  const server = await startWranglerDev({
    name: "demo-e2e",
    cwd: join(workspaceRoot, "apps/task-server"),
    config: join(workspaceRoot, "wrangler.jsonc"),
    port: Number(process.env.E2E_PORT ?? DEFAULT_PORT),
    portHint: "set E2E_PORT to a free port",
    // The key that signs file URLs (in production a secret; here one per run).
    args: ["--var", `FILE_URL_SECRET:${randomBytes(32).toString("hex")}`],
    onDispose: process.env.E2E_KEEP_LOG ? (log) => console.log(log) : undefined,
  });
  project.provide("wrangler", server.spec);
  // A test may have restarted the server from its worker: the teardown stops whatever group runs then.
  return () => server.dispose();
}
