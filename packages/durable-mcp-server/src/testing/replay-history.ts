// The replay check of durable-mcp-server/testing: histories exported from a deployment (mcp.exportHistory) replayed
// against the handlers of the code about to be deployed, without running any step body (docs/testing.md).
import { TaskHistoryError } from "../errors/history-errors.js";
import { taskDefinitionOf, type TaskDefinition, type TaskRegistry } from "../runner/index.js";
import { parseHistory, type TaskHistory } from "../steps/history-format.js";
import { checkReplay, type ReplayVerdict } from "../steps/replay-check.js";

export type { ReplayVerdict };

/**
 * Replays one task history against the handler `server` registers under `history.tool`, without running any step
 * body: each journaled step returns what the history holds, and the run stops at the first step the history does
 * not have. Compatible when every journaled step was claimed, with its kind, before the run reached a new step,
 * returned, or threw; otherwise the first divergence, naming the step the history expected and what the code
 * reached instead (`name#occurrence kind`). A branch that reaches a step the history left unfinished (a question
 * not yet answered, a body under way) stops there; a sleep replays as over.
 *
 * @param server - The author's McpServer (as `createServer(env)` builds it), or any registry of task definitions.
 * @param history - The history as `mcp.exportHistory` gave it: the parsed document, or its JSON text.
 * @returns `{ compatible: true }`, or `{ compatible: false, divergence: { expected, found, message } }`.
 * @throws TaskHistoryError when the history is malformed (`malformed`), of a future version
 * (`unsupported_version`), over MAX_HISTORY_BYTES (`too_large`), or of a tool `server` does not register
 * (`unknown_tool`); nothing runs then.
 * @example
 * ```ts
 * import { McpServer } from "durable-mcp-server";
 * import { replayHistory } from "durable-mcp-server/testing";
 *
 * async function check(createServer: () => McpServer, historyJson: string) {
 *   const verdict = await replayHistory(createServer(), historyJson);
 *   if (!verdict.compatible) throw new Error(`${verdict.divergence.expected} → ${verdict.divergence.found}`);
 * }
 * ```
 */
export async function replayHistory(server: TaskRegistry, history: TaskHistory | string): Promise<ReplayVerdict> {
  const [verdict] = await replayHistories(server, [history]);
  return verdict!;
}

/**
 * Replays many task histories (see replayHistory), one verdict per history in the same order. Every history is
 * read and its tool looked up before any runs: one that is refused refuses them all.
 *
 * @param server - The author's McpServer, or any registry of task definitions.
 * @param histories - The histories, parsed or as JSON text.
 * @returns One ReplayVerdict per history.
 * @throws TaskHistoryError naming the history (by index) and what is wrong with it; nothing runs then.
 * @example
 * ```ts
 * import { McpServer } from "durable-mcp-server";
 * import { replayHistories } from "durable-mcp-server/testing";
 *
 * async function incompatible(server: McpServer, histories: string[]) {
 *   const verdicts = await replayHistories(server, histories);
 *   return verdicts.filter((verdict) => !verdict.compatible).length;
 * }
 * ```
 */
export async function replayHistories(
  server: TaskRegistry,
  histories: ReadonlyArray<TaskHistory | string>,
): Promise<ReplayVerdict[]> {
  if (typeof (server as Partial<TaskRegistry> | null)?.[taskDefinitionOf] !== "function") {
    throw new TypeError("replayHistory takes the McpServer whose tasks the histories are checked against");
  }
  const runs = histories.map((document, index): { definition: TaskDefinition; history: TaskHistory } => {
    try {
      const history = parseHistory(document);
      const definition = server[taskDefinitionOf](history.tool);
      if (!definition) {
        throw new TaskHistoryError("unknown_tool", `the server registers no task "${history.tool}"`);
      }
      return { definition, history };
    } catch (error) {
      if (!(error instanceof TaskHistoryError) || histories.length === 1) throw error;
      throw new TaskHistoryError(error.problem, `history ${index}: ${error.message}`);
    }
  });
  const verdicts: ReplayVerdict[] = [];
  for (const { definition, history } of runs) verdicts.push(await checkReplay(definition.handler, history));
  return verdicts;
}
