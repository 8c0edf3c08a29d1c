import type { StepJournal } from "../steps/journal.js";
import type { TaskRecord } from "./task-store.js";

// What the testing seam (durable-mcp-server/testing, withTestingSeam) reaches inside a TaskRunner. The seam itself
// is a subclass only a test config exports, so a deployed Worker's bundle has none of its code; this is the
// TaskRunner's side of it: a symbol-keyed accessor, which Workers RPC cannot call (RPC reaches methods by name).

/** The symbol-keyed method of every TaskRunner that hands the testing seam its parts. */
export const SEAM_HOST: unique symbol = Symbol("durable-mcp-server.seamHost");

/** The seam's method name on a TaskRunner subclass made by withTestingSeam: not a name anyone writes by accident. */
export const TESTING_SEAM = "__durableMcpTestingSeam";

/**
 * The variable that used to turn the seam on. It enables nothing now; a runner built without the seam that sees it set
 * logs an error, so that a test config still relying on it learns why its seam calls fail.
 */
export const LEGACY_TESTING_VARIABLE = "DURABLE_MCP_TESTING";

/** A TaskRunner's parts the seam works on. */
export interface SeamHost {
  readonly sql: SqlStorage;
  readonly journal: StepJournal;
  /** Whether a run of the handler is under way (the seam waits for it to end, never writing under one). */
  running(): boolean;
  /** Creates the schema on an untouched object (an outcome may be injected before the task exists). */
  applySchema(): void;
  /** The task, or null before it exists. */
  record(): TaskRecord | null;
  /** Asks for a run now (the task's alarm, armed when none is). */
  wake(now: number): Promise<void>;
  getAlarm(): Promise<number | null>;
}

/** The runner classes that logged it already in this isolate. */
const warned = new WeakSet<object>();

/**
 * Logs, once per runner class and isolate, that the legacy variable is set on a runner whose class has no seam: the
 * variable alone enables nothing.
 */
export function warnLegacyTestingVariable(runner: object, env: unknown): void {
  const flag = (env as Record<string, unknown> | null | undefined)?.[LEGACY_TESTING_VARIABLE];
  if (flag === undefined || flag === null || flag === false || flag === "") return;
  if (typeof (runner as Record<string, unknown>)[TESTING_SEAM] === "function" || warned.has(runner.constructor)) return;
  warned.add(runner.constructor);
  console.error(
    `durable-mcp-server: ${LEGACY_TESTING_VARIABLE} is set, but it enables nothing: the testing seam is in the ` +
      `TaskRunner class only a test config exports (withTestingSeam from durable-mcp-server/testing, see ` +
      `docs/testing.md). Remove the variable from deployed configs.`,
  );
}
