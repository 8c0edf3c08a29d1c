import type { StandardSchemaV1 } from "@modelcontextprotocol/server";
import type { Step } from "../steps/types.js";

/** What a TaskRunner needs to know about a registered task to create and run it. */
export interface TaskDefinition {
  name: string;
  /** Validates tool arguments; returns the handler's input or the schema issues it was refused for. */
  parseInput(args: unknown): { ok: true; value: unknown } | { ok: false; issues: readonly StandardSchemaV1.Issue[] };
  handler: (input: unknown, step: Step) => Promise<unknown>;
  ttlMs: number | null;
  pollIntervalMs: number;
}

/** Anything that can name its task definitions: the author's McpServer. */
export interface TaskRegistry {
  getTaskDefinition(name: string): TaskDefinition | undefined;
}
