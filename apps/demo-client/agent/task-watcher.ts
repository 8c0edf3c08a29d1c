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
//
// This class is the callable surface and the state; the parts are beside it: agent/transport.ts (one request, over
// the library's raw MCP client), agent/outbound.ts (which servers, in-process or not, tokens), agent/calls.ts
// (connecting, starting a tool), agent/polling.ts (when to tasks/get), agent/storage.ts (logs and secrets in
// SQLite), agent/problems.ts (failures in the page's words). What the page and the agent share is in shared/.
import { Agent, callable, routeAgentRequest, type Connection as Socket, type ConnectionContext } from "agents";
import { type JsonObject, type LogEntry, type TaskSnapshot, type ToolInfo } from "../shared/mcp.ts";
import {
  INITIAL_STATE,
  type CallOutcome,
  type Connection,
  type StartOutcome,
  type TaskView,
  type WatcherState,
} from "../shared/watcher-state.ts";
import { CHILDREN_FOLLOWED, childrenOf, childrenToFollow, descendantsOf } from "../shared/task-tree.ts";
import { connect, ignore, listTools, startTool, type Send } from "./calls.ts";
import { Outbound } from "./outbound.ts";
import { isFinal, TaskPoller, trimTasks, type PollPayload } from "./polling.ts";
import { outcomeOf } from "./problems.ts";
import { gate } from "./session.ts";
import { WatcherStorage } from "./storage.ts";

export { serveOwnOriginWith } from "./outbound.ts";
export { LOG_LIMIT } from "./storage.ts";
/** The tasks kept per session; past it the oldest final ones are dropped. */
export const TASK_LIMIT = 100;

export class TaskWatcher extends Agent<Cloudflare.Env, WatcherState> {
  override initialState = INITIAL_STATE;

  private readonly store = new WatcherStorage(this.ctx.storage.sql);
  private readonly outbound = new Outbound(this.env, this.store);
  private readonly send: Send = (url, method, params, log) => this.outbound.request(url, method, params, log);
  /** Counts connectTo calls: only the latest one's outcome becomes the connection (see connectTo). */
  private connects = 0;
  private readonly poller = new TaskPoller({
    view: (taskId) => this.state.tasks.find((t) => t.record.taskId === taskId),
    getTask: async (view, params) =>
      (await this.send(
        view.record.serverUrl,
        "tasks/get",
        params,
        this.logger(view.record.taskId),
      )) as unknown as TaskSnapshot,
    patchTask: (taskId, patch) => this.patchTask(taskId, patch),
    followChildren: (view, snapshot) => this.followChildren(view, snapshot),
    schedule: async (delaySeconds, payload) => {
      await this.schedule(delaySeconds, "pollTask", payload);
    },
  });

  override onStart(): void {
    this.store.init();
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
      if (!isFinal(view)) void this.poller.after(view.record.taskId, 0);
    }
  }

  override onConnect(_connection: Socket, ctx: ConnectionContext): void {
    this.outbound.rememberOrigin(ctx.request.url);
  }

  /** GET: the state as JSON (the tasks and what the agent last heard of them), e.g. for a check without a page. */
  override onRequest(request: Request): Response {
    this.outbound.rememberOrigin(request.url);
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
    const listed = this.outbound.listed(String(url).trim());
    const target = listed ?? String(url).trim();
    // Tokens are kept only for listed servers: nothing else will ever be sent one.
    if (token !== undefined && listed !== undefined) this.outbound.setToken(target, token.trim() || undefined);
    const attempt = ++this.connects;
    this.update({
      serverUrl: target,
      hasToken: !!this.outbound.token(target),
      connection: { state: "connecting", url: target },
    });
    const connection = await connect(this.send, target);
    // Connects can overlap (a second click, another tab, a slow server): the latest request decides what the agent
    // is connected to, and an earlier one that ends later only answers its own caller.
    if (attempt === this.connects) this.update({ connection });
    return connection;
  }

  /** tools/list again on the connected server. */
  @callable()
  async listTools(): Promise<ToolInfo[]> {
    const { connection } = this.state;
    if (connection.state !== "connected") throw new Error("Not connected to a server.");
    const tools = await listTools(this.send, connection.url);
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
    const { outcome, view, entries } = await startTool(this.send, connection.url, tool, args);
    if (view) {
      const taskId = view.record.taskId;
      this.update({ tasks: this.trim([view, ...this.state.tasks.filter((t) => t.record.taskId !== taskId)]) });
      this.appendLog(taskId, entries);
      await this.poller.after(taskId, view.snapshot?.pollIntervalMs);
    }
    return outcome;
  }

  /** tasks/update with the answers, then tasks/get at once so the page follows the task. */
  @callable()
  async answer(taskId: string, inputResponses: JsonObject): Promise<void> {
    const view = this.view(taskId);
    await this.send(view.record.serverUrl, "tasks/update", { taskId, inputResponses }, this.logger(taskId));
    await this.poller.poll(taskId);
  }

  /** tasks/cancel; the task shows "cancellation requested" until tasks/get reports it final. */
  @callable()
  async cancel(taskId: string): Promise<void> {
    const view = this.view(taskId);
    await this.send(view.record.serverUrl, "tasks/cancel", { taskId }, this.logger(taskId));
    this.patchTask(taskId, (v) => ({ record: { ...v.record, cancelRequested: true } }));
    await this.poller.poll(taskId);
  }

  /** Forgets a task and the child tasks followed under it (the server keeps them until their ttl): no more polls, logs deleted. */
  @callable()
  remove(taskId: string): void {
    const gone = new Set([
      taskId,
      ...descendantsOf(
        this.state.tasks.map((t) => t.record),
        taskId,
      ),
    ]);
    for (const id of gone) {
      this.poller.forget(id);
      this.store.deleteLog(id);
    }
    this.update({ tasks: this.state.tasks.filter((t) => !gone.has(t.record.taskId)) });
  }

  /** The task's raw JSON-RPC log, oldest first (the newest LOG_LIMIT exchanges). */
  @callable()
  log(taskId: string): LogEntry[] {
    return this.store.log(taskId);
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

  /** A scheduled poll (this.schedule, agent/polling.ts). */
  async pollTask(payload: PollPayload): Promise<void> {
    await this.poller.due(payload);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Child tasks

  /**
   * The children a task's timeline names (its `invoke` steps) become tasks this agent follows too, so each has a
   * page: at most CHILDREN_FOLLOWED per task; the tree lists any further ones from the timeline. Their grandchildren
   * follow the same way when their own snapshots arrive.
   */
  private async followChildren(parent: TaskView, snapshot: TaskSnapshot): Promise<void> {
    const known = (taskId: string) => this.state.tasks.some((t) => t.record.taskId === taskId);
    const fresh = childrenToFollow(childrenOf(snapshot), known, CHILDREN_FOLLOWED);
    if (fresh.length === 0) return;
    const views: TaskView[] = fresh.map((child) => ({
      record: {
        taskId: child.taskId,
        tool: child.tool,
        serverUrl: parent.record.serverUrl,
        arguments: {},
        startedAt: new Date().toISOString(),
        parent: { taskId: parent.record.taskId, step: child.step },
      },
      logSeq: 0,
    }));
    this.update({ tasks: this.trim([...views, ...this.state.tasks]) });
    for (const view of views) await this.poller.after(view.record.taskId, 0);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Helpers

  private async callTool(
    serverUrl: string,
    name: string,
    args: JsonObject,
    log: (entry: LogEntry) => void,
  ): Promise<CallOutcome> {
    try {
      return { ok: true, result: await this.send(serverUrl, "tools/call", { name, arguments: args }, log) };
    } catch (error) {
      return outcomeOf(error);
    }
  }

  private logger(taskId: string): (entry: LogEntry) => void {
    return (entry) => this.appendLog(taskId, [entry]);
  }

  private appendLog(taskId: string, entries: LogEntry[]): void {
    if (entries.length === 0) return;
    const logSeq = this.store.appendLog(taskId, entries);
    this.patchTask(taskId, () => ({ logSeq }));
  }

  private view(taskId: string): TaskView {
    const view = this.state.tasks.find((t) => t.record.taskId === taskId);
    if (!view) throw new Error(`This agent did not start a task ${taskId} (or it was removed).`);
    return view;
  }

  /** At most TASK_LIMIT tasks (agent/polling.ts); the logs of those dropped go too. */
  private trim(tasks: TaskView[]): TaskView[] {
    const { kept, dropped } = trimTasks(tasks, TASK_LIMIT);
    for (const taskId of dropped) this.store.deleteLog(taskId);
    return kept;
  }

  private patchTask(taskId: string, patch: (view: TaskView) => Partial<TaskView>): void {
    this.update({
      tasks: this.state.tasks.map((view) => (view.record.taskId === taskId ? { ...view, ...patch(view) } : view)),
    });
  }

  private update(patch: Partial<WatcherState>): void {
    this.setState({ ...this.state, ...patch });
  }
}

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
