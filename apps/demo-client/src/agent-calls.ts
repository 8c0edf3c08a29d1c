// The page's calls to its agent's @callable methods, for one session. The page's connection to the agent (useAgent)
// exists only once the page rendered; a call made before that (an interrupted upload checked on load, a child's
// effect that runs before its parent's) waits in a queue until useWatcher attaches the connection after its commit.
// One per session page, kept in React state and handed down with the Watcher (src/watcher.ts): no module holds a
// connection, and nothing is written during a render.
import { McpError, type JsonObject } from "../shared/mcp.ts";
import type { CallOutcome } from "../shared/watcher-state.ts";

/** Calls a @callable method of the agent by name. */
export type Caller = <T>(method: string, args?: unknown[]) => Promise<T>;
/** An MCP request the agent makes for the page: its result, or the agent's McpError rebuilt. */
export type AgentTool = (method: string, args: unknown[]) => Promise<JsonObject>;

export class AgentCalls {
  private caller: Caller | undefined;
  private waiting: Array<(caller: Caller) => void> = [];

  /** Makes calls through `caller` from now on (the queued ones first); the returned function detaches it again. */
  attach(caller: Caller): () => void {
    this.caller = caller;
    for (const release of this.waiting.splice(0)) release(caller);
    return () => {
      if (this.caller === caller) this.caller = undefined;
    };
  }

  /** Calls a @callable method of the agent (queued until the page's agent connection is attached). */
  call = <T>(method: string, args: unknown[] = []): Promise<T> => {
    if (this.caller) return this.caller<T>(method, args);
    return new Promise<T>((resolve, reject) =>
      this.waiting.push((caller) => caller<T>(method, args).then(resolve, reject)),
    );
  };

  /**
   * An MCP request the agent makes for the page (file_upload_url, file_status, file_download_url): its result, or
   * the agent's McpError rebuilt (unreachable, not-mcp, rpc), so the page can tell the cases apart.
   */
  tool: AgentTool = async (method, args) => {
    let outcome: CallOutcome;
    try {
      outcome = await this.call<CallOutcome>(method, args);
    } catch (error) {
      throw new McpError(
        "unreachable",
        `The page's agent did not answer (${error instanceof Error ? error.message : String(error)}).`,
      );
    }
    if (outcome.ok) return outcome.result;
    throw new McpError(outcome.kind, outcome.message, outcome.rpcError, outcome.httpStatus);
  };
}
