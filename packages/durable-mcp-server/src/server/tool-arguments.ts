import type { CallToolResult, StandardSchemaV1, StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { toolErrorResult } from "../errors/envelope.js";
import { MAX_LISTED_ISSUES } from "../limits.js";

// A task tool's arguments against its input schema: checked synchronously (a task is created in the same call), and
// a failure answered with the repairable envelope every path uses.

type SchemaIssue = StandardSchemaV1.Issue;

/** Validates synchronously; an asynchronous schema is refused as an issue (a task's create cannot wait on it). */
export function validateSync(
  schema: StandardSchemaWithJSON,
  args: unknown,
): { ok: true; value: unknown } | { ok: false; issues: readonly SchemaIssue[] } {
  const result = schema["~standard"].validate(args);
  if (result instanceof Promise) {
    return { ok: false, issues: [{ message: "asynchronous input schemas are not supported for tasks" }] };
  }
  return result.issues ? { ok: false, issues: result.issues } : { ok: true, value: result.value };
}

/**
 * The one envelope for arguments that fail a tool's input schema (docs/errors.md, `invalid_arguments`): `param` is
 * the first failing path, `details.issues` lists the issues briefly.
 */
export function invalidArgumentsResult(tool: string, issues: readonly SchemaIssue[]): CallToolResult {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
    const path = (issue.path ?? [])
      .map((part: PropertyKey | StandardSchemaV1.PathSegment) => String(typeof part === "object" ? part.key : part))
      .join(".");
    const code = (issue as { code?: unknown }).code;
    return { path, message: issue.message, ...(typeof code === "string" ? { code } : {}) };
  });
  const param = listed[0]?.path || undefined;
  const summary = listed.map((issue) => `${issue.path || "(root)"}: ${issue.message}`).join("; ");
  return toolErrorResult({
    code: "invalid_arguments",
    message: `Input validation error: ${summary}`,
    retryable: false,
    recoveryHint: param
      ? `Fix the argument "${param}" (every problem is listed in details.issues) and call ${tool} again.`
      : `Pass ${tool} an arguments object that matches its input schema, then call it again.`,
    ...(param ? { param } : {}),
    details: {
      tool,
      issues: listed,
      ...(issues.length > listed.length ? { more: issues.length - listed.length } : {}),
    },
  });
}
