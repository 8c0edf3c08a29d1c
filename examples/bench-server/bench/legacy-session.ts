// A bare 2025-11-25 client for `pnpm bench:catalog-create`: one signed session (`initialize`, then
// `notifications/initialized`), task-augmented `tools/call` creates, and `tasks/list` pages — plain fetch, so that
// what is timed is the wire and the server, not an SDK client. Per-session lists key on the session, so every path
// the bench compares is driven through one.
const PROTOCOL = "2025-11-25";

export class LegacySession {
  #id = 1;
  readonly url: string;
  readonly sessionId: string;

  private constructor(url: string, sessionId: string) {
    this.url = url;
    this.sessionId = sessionId;
  }

  /** Opens a session on `url` (an MCP endpoint) and says it is initialized. */
  static async open(url: string): Promise<LegacySession> {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: PROTOCOL,
          capabilities: { tasks: { list: {}, cancel: {} } },
          clientInfo: { name: "durable-mcp-bench", version: "0.1.0" },
        },
      }),
    });
    const sessionId = response.headers.get("mcp-session-id");
    const body = await readJsonRpc(response);
    if (!sessionId || body.error) throw new Error(`initialize on ${url}: ${response.status} ${JSON.stringify(body)}`);
    const session = new LegacySession(url, sessionId);
    const initialized = await session.#post({ jsonrpc: "2.0", method: "notifications/initialized" });
    await initialized.arrayBuffer();
    if (initialized.status >= 300) throw new Error(`notifications/initialized on ${url}: ${initialized.status}`);
    return session;
  }

  /** A task-augmented `tools/call`: the new task's id, once the server answered the CreateTaskResult. */
  async create(name: string, args: Record<string, unknown>): Promise<string> {
    const result = (await this.request("tools/call", { name, arguments: args, task: { ttl: 600_000 } })) as {
      task?: { taskId?: string };
    };
    const taskId = result.task?.taskId;
    if (typeof taskId !== "string") throw new Error(`tools/call answered no task: ${JSON.stringify(result)}`);
    return taskId;
  }

  /** One page of `tasks/list` (newest first): its task ids and the next page's cursor. */
  async list(cursor?: string): Promise<{ ids: string[]; nextCursor?: string }> {
    const result = (await this.request("tasks/list", cursor ? { cursor } : {})) as {
      tasks: { taskId: string }[];
      nextCursor?: string;
    };
    return { ids: result.tasks.map((task) => task.taskId), nextCursor: result.nextCursor };
  }

  async request(method: string, params: Record<string, unknown>): Promise<unknown> {
    const response = await this.#post({ jsonrpc: "2.0", id: this.#id++, method, params });
    const body = await readJsonRpc(response);
    if (body.error) throw new Error(`${method} on ${this.url}: ${JSON.stringify(body.error)}`);
    return body.result;
  }

  #post(message: Record<string, unknown>): Promise<Response> {
    return fetch(this.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": PROTOCOL,
        "mcp-session-id": this.sessionId,
      },
      body: JSON.stringify(message),
    });
  }
}

/** The JSON-RPC answer of a response, whether sent as JSON or as the one message of an SSE stream. */
async function readJsonRpc(response: Response): Promise<{ result?: unknown; error?: unknown }> {
  const text = await response.text();
  if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
    try {
      return JSON.parse(text) as { result?: unknown; error?: unknown };
    } catch {
      throw new Error(`${response.status} ${text.slice(0, 300)}`);
    }
  }
  for (const line of text.split("\n")) {
    if (!line.startsWith("data:")) continue;
    const message = JSON.parse(line.slice(5)) as { id?: unknown; result?: unknown; error?: unknown };
    if (message.id !== undefined && (message.result !== undefined || message.error !== undefined)) return message;
  }
  throw new Error(`no JSON-RPC answer in the stream: ${text.slice(0, 300)}`);
}
