import { applyD1Migrations, type D1Migration } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { fromCatalogSql, type CatalogRow, type CatalogRowSql } from "../../src/catalog/catalog-row.js";
import { rpc } from "../jsonrpc.js";
import type { FixtureEnv } from "../fixtures/worker.js";

export const catalogEnv = env as unknown as FixtureEnv & { CATALOG_MIGRATIONS: D1Migration[] };
export const db = catalogEnv.OPS_CATALOG;

/** The package's migration, as an operator applies it with wrangler. */
export function applyCatalogMigrations(): Promise<void> {
  return applyD1Migrations(db, catalogEnv.CATALOG_MIGRATIONS);
}

export async function catalogRow(taskId: string): Promise<CatalogRow | null> {
  const row = await db.prepare("SELECT * FROM durable_mcp_tasks WHERE task_id = ?").bind(taskId).first<CatalogRowSql>();
  return row ? fromCatalogSql(row) : null;
}

/** Polls the catalog until the task's row satisfies `done` (the catalog follows its runner a moment later). */
export async function waitForRow(
  taskId: string,
  done: (row: CatalogRow | null) => boolean,
  timeoutMs = 10_000,
): Promise<CatalogRow | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await catalogRow(taskId);
    if (done(row)) return row;
    if (Date.now() > deadline) throw new Error(`catalog row of ${taskId} never matched; last: ${JSON.stringify(row)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Creates a task of the catalog fixture as `principal` over the wire; returns its id. */
export async function createCatalogTask(tool: string, args: Record<string, unknown>, principal: string) {
  const reply = await rpc("tools/call", { name: tool, arguments: args }, { principal, path: "/catalog/mcp" });
  const taskId = reply.body.result?.taskId as string | undefined;
  if (!taskId) throw new Error(`no task: ${JSON.stringify(reply.body)}`);
  return taskId;
}

export function catalogRunner(taskId: string) {
  const namespace = catalogEnv.CATALOG_TASK_RUNNER;
  return namespace.get(namespace.idFromName(taskId)) as unknown as {
    refreshCatalog(taskId: string): Promise<"refreshed" | "gone" | "off">;
  };
}
