import type { Step } from "../steps/types.js";

/** What a TaskRunner needs to know about a registered task to create and run it. */
export interface TaskDefinition {
  name: string;
  /** Validates tool arguments; returns the handler's input or the reason it was refused. */
  parseInput(args: unknown): { ok: true; value: unknown } | { ok: false; message: string };
  handler: (input: unknown, step: Step) => Promise<unknown>;
  ttlMs: number | null;
  pollIntervalMs: number;
}

/** Anything that can name its task definitions: the author's McpServer. */
export interface TaskRegistry {
  getTaskDefinition(name: string): TaskDefinition | undefined;
}
