import { rowOf } from "../catalog/catalog-queries.js";
import type { OperatorLimits } from "./limits-route.js";
import type { RunnerClient } from "../tasks/runner-client.js";
import { readJsonBody } from "../wire/json-body.js";
import { OperatorError } from "./operator-errors.js";

// What every operator route shares: its dependencies, strict reading of methods, parameters and bodies, the catalog
// (or the catalog_off error), and a task's principal. The routes are operator-reads.ts and operator-writes.ts; the
// router is operator-api.ts.

export interface OperatorDeps {
  /** The catalog, or undefined when the deployment binds none ("catalog off"). */
  db: D1Database | undefined;
  runners: () => RunnerClient;
  waitUntil?: (promise: Promise<unknown>) => void;
  /** Hands a bulk job to the BulkDriver, where one is bound; without it jobs advance when read. */
  driver?: (jobId: string) => Promise<void>;
  /** The deployment's fair-share limits (GET /limits). */
  limits?: OperatorLimits;
}

const MAX_OPERATOR_BODY_BYTES = 64 * 1024;

export function expect(ok: boolean, method: string): void {
  if (!ok) throw new OperatorError(405, "method_not_allowed", `use ${method} here`);
}

export function noParams(params: URLSearchParams): void {
  allowOnly(params, []);
}

export function allowOnly(params: URLSearchParams, allowed: readonly string[]): void {
  for (const key of params.keys()) {
    if (!allowed.includes(key)) {
      throw new OperatorError(400, "unknown_filter", `unknown parameter "${key.slice(0, 64)}" here`, key.slice(0, 64));
    }
  }
}

export function catalog(deps: OperatorDeps): D1Database {
  if (!deps.db) {
    throw new OperatorError(
      503,
      "catalog_off",
      "the task catalog is off: bind a D1 database as TASK_CATALOG (durableMcp's catalog option) to list, count and act in bulk",
    );
  }
  return deps.db;
}

/** The JSON object body, its fields limited to `allowed`; an empty body reads as `{}` when `optional`. */
export async function body(
  request: Request,
  allowed: readonly string[],
  optional = false,
): Promise<Record<string, unknown>> {
  const read = await readJsonBody(request, { maxBytes: MAX_OPERATOR_BODY_BYTES });
  if (optional && read.kind === "not-json" && read.text.trim() === "") return {};
  if (read.kind !== "json" || read.value === null || typeof read.value !== "object" || Array.isArray(read.value)) {
    throw new OperatorError(
      400,
      "invalid_body",
      `the body must be a JSON object of at most ${MAX_OPERATOR_BODY_BYTES} bytes`,
    );
  }
  const value = read.value as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) {
      throw new OperatorError(
        400,
        "unknown_filter",
        `unknown field "${key.slice(0, 64)}"; expected ${allowed.join(", ")}`,
        key.slice(0, 64),
      );
    }
  }
  return value;
}

/** A string field of a body, or undefined; anything else is a 400 naming it. */
export function optionalString(input: Record<string, unknown>, field: string, maxLength = 512): string | undefined {
  const value = input[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > maxLength) {
    throw new OperatorError(400, "invalid_body", `${field} must be a string of 1 to ${maxLength} characters`, field);
  }
  return value;
}

/** The task's principal: given, or the catalog's row (404 when the catalog has no such task). */
export async function principalOf(taskId: string, given: string | null, deps: OperatorDeps): Promise<string> {
  if (given !== null) return given;
  const row = deps.db ? await rowOf(deps.db, taskId) : null;
  if (!row) {
    throw new OperatorError(
      404,
      "not_found",
      deps.db ? `the catalog has no task ${taskId}` : `the catalog is off: give ?principal= to read task ${taskId}`,
    );
  }
  return row.principal;
}

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
