// The task page's MCP client: an Agents SDK Agent (a SQLite Durable Object), one per browser session. It connects to
// an MCP server, starts tools as tasks (MCP 2026-07-28 with the Tasks extension), keeps the tasks it started and
// polls each live one on its pollIntervalMs with the agent's schedules (alarms), so they are followed while no page
// is open, answers and cancels them, and pushes all of it to the page with setState. The page (src/) connects with
// `useAgent` and calls the @callable methods below. File bytes never pass through here: the agent asks for the
// signed upload and download URLs, the browser moves the bytes.
//
// Served by the demo Worker (apps/task-server/src/worker.ts, binding TASK_WATCHER, route /agents/task-watcher/<id>)
// behind the gate of agent/session.ts (same origin, a well-formed name, the session's secret cookie). It calls only
// the servers WATCHER_SERVERS lists (agent/servers.ts).
// A server URL on the Worker's own origin is called in-process, through the handler the Worker registers with
// `serveOwnOriginWith`: a Worker may not fetch itself.
import { Agent, callable, routeAgentRequest, type Connection as Socket, type ConnectionContext } from "agents";
import { listedServer, listedServers, NotListedError } from "./servers.ts";
import { gate } from "./session.ts";
import {
  FINAL_STATUSES,
  McpError,
  resultText,
  rpc,
  STEPS_META,
  TASKS_EXTENSION,
  type JsonObject,
  type LogEntry,
  type TaskSnapshot,
  type ToolInfo,
} from "../src/mcp.ts";
import {
  INITIAL_STATE,
  type CallOutcome,
  type Connection,
  type Problem,
  type StartOutcome,
  type TaskView,
  type WatcherState,
} from "../src/watcher-state.ts";

/** The newest exchanges kept per task. */
export const LOG_LIMIT = 200;
/** The tasks kept per session; past it the oldest final ones are dropped. */
export const TASK_LIMIT = 100;
const RETRY_MS = 3000;

type OwnHandler = (request: Request, env: unknown) => Response | Promise<Response>;
let ownHandler: OwnHandler | undefined;

/**
 * The Worker's own fetch handler: requests to a server URL on the origin the agent is served from go through it,
 * in-process, instead of an outbound fetch of the Worker to itself.
 */
export function serveOwnOriginWith(handler: OwnHandler): void {
  ownHandler = handler;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function describe(error: unknown, url: string, what: string): Problem {
  if (error instanceof NotListedError) {
    return {
      message: `${error.message} Nothing was sent to it.`,
      next: "Pick one of the listed servers; the Worker's operator lists them in WATCHER_SERVERS.",
    };
  }
  if (error instanceof McpError) {
    if (error.kind === "unreachable") {
      return {
        message: `${error.message} Nothing answered there.`,
        next:
          "Check the URL and that the server is running (the demo: `npm start`, MCP at http://127.0.0.1:8788/mcp). " +
          "The page's agent (a Durable Object of this Worker) sends the requests, so the server must be reachable " +
          "from the Worker. Or connect to this page's own server.",
      };
    }
    if (error.kind === "not-mcp" && error.httpStatus === 401) {
      return {
        message: `${url} refused ${what}: it needs a bearer token, and the agent has none it accepts (HTTP 401).`,
        next: "Enter the server's token in the token field and connect again (docs/deploy.md, AUTH_TOKENS).",
      };
    }
    if (error.kind === "not-mcp") {
      return {
        message: `${url} answered ${what}, but not as an MCP server (${error.httpStatus !== undefined ? `HTTP ${error.httpStatus}` : "no status"}).`,
        next: "Check the path: durable-mcp-server serves MCP at /mcp. Or connect to this page's own server.",
      };
    }
    return {
      message: `${url} refused ${what}: ${error.rpcError?.message ?? error.message} (JSON-RPC error ${error.rpcError?.code ?? "?"}).`,
      next:
        "This page speaks MCP 2026-07-28 (server/discover); an older server cannot run tasks for it. " +
        "Connect to a server built with durable-mcp-server, such as this page's own.",
    };
  }
  return { message: `${what} failed: ${String(error)}`, next: "Try again, or connect to this page's own server." };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function outcomeOf(error: unknown): CallOutcome {
  if (error instanceof McpError) {
    return {
      ok: false,
      kind: error.kind,
      message: error.message,
      ...(error.rpcError ? { rpcError: error.rpcError } : {}),
      ...(error.httpStatus !== undefined ? { httpStatus: error.httpStatus } : {}),
    };
  }
  return { ok: false, kind: "unreachable", message: errorText(error) };
}

export class TaskWatcher extends Agent<Cloudflare.Env, WatcherState> {
  override initialState = INITIAL_STATE;

  /** Which scheduled poll of each task is the live one: older schedules (e.g. of an earlier instance) do nothing. */
  private polls = new Map<string, string>();
  private readonly instanceId = crypto.randomUUID().slice(0, 8);
  private pollCount = 0;

  override onStart(): void {
    this.exec(
      "CREATE TABLE IF NOT EXISTS watcher_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, entry TEXT NOT NULL)",
    );
    this.exec("CREATE INDEX IF NOT EXISTS watcher_log_task ON watcher_log (task_id, seq)");
    this.exec("CREATE TABLE IF NOT EXISTS watcher_secret (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const { connection } = this.state;
    if (connection.state === "connecting") {
      this.update({
        connection: {
          state: "failed",
          url: connection.url,
          problem: { message: `Connecting to ${connection.url} was interrupted.`, next: "Connect again." },
        },
      });
    }
    // Every start (a restart of the server, a wake after eviction) follows each live task again at once.
    for (const view of this.state.tasks) {
      if (!this.isFinal(view)) void this.schedulePoll(view.record.taskId, 0);
    }
  }

  override onConnect(_connection: Socket, ctx: ConnectionContext): void {
    this.rememberOrigin(ctx.request.url);
  }

  /** GET: the state as JSON (the tasks and what the agent last heard of them), e.g. for a check without a page. */
  override onRequest(request: Request): Response {
    this.rememberOrigin(request.url);
    if (request.method !== "GET") return new Response("method not allowed", { status: 405 });
    return Response.json(this.state);
  }

  /** Only the agent changes its state; the page acts through the callable methods. */
  override validateStateChange(_next: WatcherState, source: Socket | "server"): void {
    if (source !== "server") throw new Error("The task watcher's state is read-only for clients.");
  }

  // -------------------------------------------------------------------------------------------------------------
  // Connecting

  /**
   * server/discover, then tools/list. `token` replaces the bearer token kept for `url` (an empty string removes it;
   * undefined keeps it).
   */
  @callable()
  async connectTo(url: string, token?: string): Promise<Connection> {
    // A listed server, in its listed form; anything else fails below, before any request.
    const listed = this.listed(String(url).trim());
    const target = listed ?? String(url).trim();
    // Tokens are kept only for listed servers: nothing else will ever be sent one.
    if (token !== undefined && listed !== undefined) this.setSecret(`token:${target}`, token.trim() || undefined);
    this.update({
      serverUrl: target,
      hasToken: !!this.token(target),
      connection: { state: "connecting", url: target },
    });
    let connection: Connection;
    let server = "";
    let tasks = false;
    try {
      const discovered = await this.request(target, "server/discover", {}, ignore);
      const meta = discovered._meta as JsonObject | undefined;
      const info = meta?.["io.modelcontextprotocol/serverInfo"] as JsonObject | undefined;
      server = info ? `${String(info.name)} ${String(info.version)}` : "an MCP server";
      const capabilities = discovered.capabilities as JsonObject | undefined;
      const extensions = capabilities?.extensions as JsonObject | undefined;
      tasks = !!extensions && TASKS_EXTENSION in extensions;
      try {
        const tools = await this.tools(target);
        connection = { state: "connected", url: target, server, tasks, tools };
      } catch (error) {
        connection = { state: "failed", url: target, problem: describe(error, target, "tools/list") };
      }
    } catch (error) {
      connection = { state: "failed", url: target, problem: describe(error, target, "server/discover") };
    }
    this.update({ connection });
    return connection;
  }

  /** tools/list again on the connected server. */
  @callable()
  async listTools(): Promise<ToolInfo[]> {
    const { connection } = this.state;
    if (connection.state !== "connected") throw new Error("Not connected to a server.");
    const tools = await this.tools(connection.url);
    this.update({ connection: { ...connection, tools } });
    return tools;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Tasks

  /** tools/call on the connected server; a CreateTaskResult becomes a task this agent follows. */
  @callable()
  async startTask(tool: string, args: JsonObject): Promise<StartOutcome> {
    const { connection } = this.state;
    if (connection.state !== "connected") return { kind: "error", text: "Connect to a server first." };
    const serverUrl = connection.url;
    const entries: LogEntry[] = [];
    try {
      const result = await this.request(serverUrl, "tools/call", { name: tool, arguments: args }, (e) =>
        entries.push(e),
      );
      if (result.resultType === "task" && typeof result.taskId === "string") {
        const snapshot = result as unknown as TaskSnapshot;
        const view: TaskView = {
          record: { taskId: snapshot.taskId, tool, serverUrl, arguments: args, startedAt: new Date().toISOString() },
          snapshot,
          polledAt: new Date().toISOString(),
          logSeq: 0,
        };
        this.update({
          tasks: this.trim([view, ...this.state.tasks.filter((t) => t.record.taskId !== view.record.taskId)]),
        });
        this.appendLog(snapshot.taskId, entries);
        await this.schedulePoll(snapshot.taskId, snapshot.pollIntervalMs ?? 1000);
        return {
          kind: "ok",
          text: `Started ${tool} as task ${snapshot.taskId}: follow it under "Tasks".`,
          taskId: snapshot.taskId,
        };
      }
      if (result.isError === true) {
        return {
          kind: "error",
          text: `${tool} did not start: ${resultText(result) || JSON.stringify(result)}. Fix the input and start it again.`,
        };
      }
      return { kind: "ok", text: `${tool} answered at once: ${resultText(result) || JSON.stringify(result)}` };
    } catch (error) {
      const problem = describe(error, serverUrl, "tools/call");
      return { kind: "error", text: `${problem.message} Next: ${problem.next}` };
    }
  }

  /** tasks/update with the answers, then tasks/get at once so the page follows the task. */
  @callable()
  async answer(taskId: string, inputResponses: JsonObject): Promise<void> {
    const view = this.view(taskId);
    await this.request(view.record.serverUrl, "tasks/update", { taskId, inputResponses }, this.logger(taskId));
    await this.poll(taskId);
  }

  /** tasks/cancel; the task shows "cancellation requested" until tasks/get reports it final. */
  @callable()
  async cancel(taskId: string): Promise<void> {
    const view = this.view(taskId);
    await this.request(view.record.serverUrl, "tasks/cancel", { taskId }, this.logger(taskId));
    this.patchTask(taskId, (v) => ({ record: { ...v.record, cancelRequested: true } }));
    await this.poll(taskId);
  }

  /** Forgets a task (the server keeps it until its ttl): no more polls, its log is deleted. */
  @callable()
  remove(taskId: string): void {
    this.polls.delete(taskId);
    this.exec("DELETE FROM watcher_log WHERE task_id = ?", taskId);
    this.update({ tasks: this.state.tasks.filter((t) => t.record.taskId !== taskId) });
  }

  /** The task's raw JSON-RPC log, oldest first (the newest LOG_LIMIT exchanges). */
  @callable()
  log(taskId: string): LogEntry[] {
    return this.sql<{ entry: string }>`SELECT entry FROM watcher_log WHERE task_id = ${taskId} ORDER BY seq`.map(
      (row) => JSON.parse(row.entry) as LogEntry,
    );
  }

  // -------------------------------------------------------------------------------------------------------------
  // Files: the agent asks for handles and signed URLs; the browser uploads and downloads the bytes itself.

  /** file_upload_url {name, size, sha256, mimeType}: a handle and a signed tus upload URL. */
  @callable()
  async fileUploadUrl(serverUrl: string, args: JsonObject): Promise<CallOutcome> {
    return this.callTool(serverUrl, "file_upload_url", args, ignore);
  }

  /** file_status {handle}: state, offset and sha256 of an upload. */
  @callable()
  async fileStatus(serverUrl: string, handle: string): Promise<CallOutcome> {
    return this.callTool(serverUrl, "file_status", { handle }, ignore);
  }

  /** file_download_url {handle}: a signed download URL; logged with the task that produced the file. */
  @callable()
  async fileDownloadUrl(serverUrl: string, handle: string, taskId?: string): Promise<CallOutcome> {
    const log = taskId && this.state.tasks.some((t) => t.record.taskId === taskId) ? this.logger(taskId) : ignore;
    return this.callTool(serverUrl, "file_download_url", { handle }, log);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Polling

  /** A scheduled poll (this.schedule): only the task's newest schedule polls. */
  async pollTask(payload: { taskId: string; poll: string }): Promise<void> {
    if (this.polls.get(payload.taskId) !== payload.poll) return;
    this.polls.delete(payload.taskId);
    await this.poll(payload.taskId);
  }

  private async poll(taskId: string): Promise<void> {
    const view = this.state.tasks.find((t) => t.record.taskId === taskId);
    if (!view) return;
    try {
      // Ask for the step timeline too: the task page shows it (servers that do not know the key ignore it).
      const params = { taskId, _meta: { [STEPS_META]: true } };
      const result = await this.request(view.record.serverUrl, "tasks/get", params, this.logger(taskId));
      const snapshot = result as unknown as TaskSnapshot;
      this.patchTask(taskId, () => ({
        snapshot,
        pollError: undefined,
        gone: undefined,
        polledAt: new Date().toISOString(),
      }));
      if (!FINAL_STATUSES.has(snapshot.status)) await this.schedulePoll(taskId, snapshot.pollIntervalMs ?? 1000);
      else this.polls.delete(taskId);
    } catch (error) {
      if (error instanceof McpError && error.kind === "rpc" && error.rpcError?.code === -32602) {
        this.polls.delete(taskId);
        this.patchTask(taskId, () => ({
          gone: `The server does not know this task any more (${error.rpcError?.message}): it expired, or it belongs to another server or caller.`,
        }));
        return;
      }
      this.patchTask(taskId, () => ({ pollError: errorText(error) }));
      await this.schedulePoll(taskId, RETRY_MS);
    }
  }

  /** The next poll of `taskId` in `delayMs` (whole seconds: the schedules' resolution), replacing any pending one. */
  private async schedulePoll(taskId: string, delayMs: number): Promise<void> {
    const poll = `${this.instanceId}:${++this.pollCount}`;
    this.polls.set(taskId, poll);
    await this.schedule(Math.ceil(Math.max(0, delayMs) / 1000), "pollTask", { taskId, poll });
  }

  // -------------------------------------------------------------------------------------------------------------
  // Helpers

  private async tools(url: string): Promise<ToolInfo[]> {
    const listed = await this.request(url, "tools/list", {}, ignore);
    return Array.isArray(listed.tools) ? (listed.tools as unknown as ToolInfo[]) : [];
  }

  private async callTool(
    serverUrl: string,
    name: string,
    args: JsonObject,
    log: (entry: LogEntry) => void,
  ): Promise<CallOutcome> {
    try {
      return { ok: true, result: await this.request(serverUrl, "tools/call", { name, arguments: args }, log) };
    } catch (error) {
      return outcomeOf(error);
    }
  }

  /** One JSON-RPC request: in-process for the Worker's own origin, fetch for any other; with the URL's token. */
  private request(
    url: string,
    method: string,
    params: JsonObject,
    log: (entry: LogEntry) => void,
  ): Promise<JsonObject> {
    const own = this.getSecret("origin");
    // Only listed servers (WATCHER_SERVERS), checked before anything is sent.
    if (this.listed(url) === undefined) return Promise.reject(new NotListedError(url));
    const handler = ownHandler;
    const inProcess = handler && own !== undefined && originOf(url) === own;
    return rpc(url, method, params, log, {
      token: this.token(url),
      ...(inProcess ? { fetch: async (request: Request) => handler(request, this.env) } : {}),
    });
  }

  /** `url` as WATCHER_SERVERS lists it, or undefined (also while the agent does not know its own origin yet). */
  private listed(url: string): string | undefined {
    const own = this.getSecret("origin");
    return own === undefined ? undefined : listedServer(url, listedServers(this.env, own));
  }

  private logger(taskId: string): (entry: LogEntry) => void {
    return (entry) => this.appendLog(taskId, [entry]);
  }

  private appendLog(taskId: string, entries: LogEntry[]): void {
    if (entries.length === 0) return;
    for (const entry of entries) {
      this.exec("INSERT INTO watcher_log (task_id, entry) VALUES (?, ?)", taskId, JSON.stringify(entry));
    }
    const [last] = this.sql<{ seq: number }>`SELECT max(seq) AS seq FROM watcher_log WHERE task_id = ${taskId}`;
    const logSeq = last?.seq ?? 0;
    this.exec(
      "DELETE FROM watcher_log WHERE task_id = ? AND seq <= (SELECT seq FROM watcher_log WHERE task_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
      taskId,
      taskId,
      LOG_LIMIT,
    );
    this.patchTask(taskId, () => ({ logSeq }));
  }

  private view(taskId: string): TaskView {
    const view = this.state.tasks.find((t) => t.record.taskId === taskId);
    if (!view) throw new Error(`This agent did not start a task ${taskId} (or it was removed).`);
    return view;
  }

  private isFinal(view: TaskView): boolean {
    return !!view.gone || (view.snapshot !== undefined && FINAL_STATUSES.has(view.snapshot.status));
  }

  /** At most TASK_LIMIT tasks: the oldest final ones go first. */
  private trim(tasks: TaskView[]): TaskView[] {
    const drop = new Set<string>();
    for (let i = tasks.length - 1; i >= 0 && tasks.length - drop.size > TASK_LIMIT; i--) {
      const view = tasks[i];
      if (view && this.isFinal(view)) drop.add(view.record.taskId);
    }
    for (const taskId of drop) this.exec("DELETE FROM watcher_log WHERE task_id = ?", taskId);
    return tasks.filter((t) => !drop.has(t.record.taskId));
  }

  private patchTask(taskId: string, patch: (view: TaskView) => Partial<TaskView>): void {
    this.update({
      tasks: this.state.tasks.map((view) => (view.record.taskId === taskId ? { ...view, ...patch(view) } : view)),
    });
  }

  private update(patch: Partial<WatcherState>): void {
    this.setState({ ...this.state, ...patch });
  }

  private token(url: string): string | undefined {
    return this.getSecret(`token:${url}`);
  }

  private rememberOrigin(url: string): void {
    const origin = originOf(url);
    if (origin && origin !== this.getSecret("origin")) this.setSecret("origin", origin);
  }

  private exec(query: string, ...bindings: (string | number | null)[]): void {
    this.ctx.storage.sql.exec(query, ...bindings);
  }

  /** Kept in SQLite beside the state, never pushed to the page. */
  private getSecret(key: string): string | undefined {
    return this.sql<{ value: string }>`SELECT value FROM watcher_secret WHERE key = ${key}`[0]?.value;
  }

  private setSecret(key: string, value: string | undefined): void {
    if (value === undefined) this.exec("DELETE FROM watcher_secret WHERE key = ?", key);
    else this.exec("INSERT OR REPLACE INTO watcher_secret (key, value) VALUES (?, ?)", key, value);
  }
}

const ignore = (_entry: LogEntry) => {};

/**
 * POST /agents/session, and `/agents/task-watcher/<name>` (WebSocket and HTTP) routed to the session's TaskWatcher
 * once the gate (agent/session.ts: origin, name, session secret) lets it through; null for other paths.
 */
export async function routeTaskWatcher(request: Request, env: Record<string, unknown>): Promise<Response | null> {
  const passed = await gate(request, env);
  if (passed === null || passed instanceof Response) return passed;
  return routeAgentRequest(request, env);
}

export { WatcherClients } from "./session.ts";
