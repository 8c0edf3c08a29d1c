// Chrome DevTools Protocol calls to the Worker's isolate through wrangler dev's inspector port (the proxy relays them
// to the runtime workerd's inspector). Used to read the isolate's V8 heap and to force a garbage collection before a
// memory reading, so that what the runtime holds is told apart from garbage not yet collected. wrangler's proxy
// admits one DevTools connection at a time (a second is closed with 1013).

/** How often `nudge` is called while a call is unanswered. */
const NUDGE_MS = 500;

/** One DevTools connection to the isolate; calls go one at a time. */
export class DevToolsSession {
  readonly #socket: WebSocket;
  #nextId = 1;
  readonly #pending = new Map<number, { done: (result: unknown) => void; fail: (error: Error) => void }>();
  readonly #listeners = new Map<string, (params: unknown) => void>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        method?: string;
        params?: unknown;
        result?: unknown;
        error?: unknown;
      };
      // Events (console lines, script parsing) carry no id of ours: dropped unless someone listens for them.
      if (message.id === undefined && message.method !== undefined)
        this.#listeners.get(message.method)?.(message.params);
      const waiting = message.id === undefined ? undefined : this.#pending.get(message.id);
      if (!waiting) return;
      this.#pending.delete(message.id!);
      if (message.error !== undefined) waiting.fail(new Error(`inspector: ${JSON.stringify(message.error)}`));
      else waiting.done(message.result);
    });
    socket.addEventListener("close", (event) => {
      for (const { fail } of this.#pending.values())
        fail(new Error(`inspector: closed (${event.code} ${event.reason})`));
      this.#pending.clear();
    });
  }

  static async open(inspectorPort: number): Promise<DevToolsSession> {
    // The proxy only admits DevTools connections from a local Origin. (`headers` is undici's extension to WebSocket.)
    const init = { headers: { origin: "http://localhost" } } as unknown as string[];
    const socket = new WebSocket(`ws://127.0.0.1:${inspectorPort}/ws`, init);
    await new Promise<void>((done, fail) => {
      socket.addEventListener("open", () => done());
      socket.addEventListener("error", () => fail(new Error(`inspector: cannot connect to port ${inspectorPort}`)));
    });
    return new DevToolsSession(socket);
  }

  /**
   * One call and its result. `nudge`, when given, is called every 500 ms until the answer comes: some calls
   * (`HeapProfiler.collectGarbage`) are only carried out, and answered, once the isolate next runs something, and an
   * idle workerd isolate runs nothing until a request reaches it.
   */
  async call<T = unknown>(
    method: string,
    params: Record<string, unknown> = {},
    { nudge, timeoutMs = 30_000 }: { nudge?: () => Promise<unknown>; timeoutMs?: number } = {},
  ): Promise<T> {
    const id = this.#nextId++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let nudging: ReturnType<typeof setInterval> | undefined;
    try {
      return await new Promise<T>((done, fail) => {
        this.#pending.set(id, { done: (result) => done(result as T), fail });
        timer = setTimeout(() => fail(new Error(`inspector: no answer to ${method} in ${timeoutMs} ms`)), timeoutMs);
        if (nudge) {
          nudging = setInterval(() => {
            nudge().catch((error: unknown) => fail(new Error(`inspector: the nudge failed: ${String(error)}`)));
          }, NUDGE_MS);
        }
        this.#socket.send(JSON.stringify({ id, method, params }));
      });
    } finally {
      this.#pending.delete(id);
      clearTimeout(timer);
      clearInterval(nudging);
    }
  }

  /**
   * Forces a full garbage collection of the isolate and returns its V8 heap after it, in bytes. `nudge` must make
   * the isolate run something (e.g. fetch any path of the Worker): V8 carries the collection out in a task of the
   * isolate, which workerd runs only when it next enters it (measured: no answer within 30 s while idle, then the
   * answer during the first request).
   */
  async collectGarbage(nudge: () => Promise<unknown>): Promise<{ usedSize: number; totalSize: number }> {
    await this.call("HeapProfiler.collectGarbage", {}, { nudge });
    return this.call<{ usedSize: number; totalSize: number }>("Runtime.getHeapUsage");
  }

  /**
   * A heap snapshot of the isolate (V8 collects all garbage before taking one), as parsed JSON: the
   * `.heapsnapshot` format, streamed as `HeapProfiler.addHeapSnapshotChunk` events before the call's answer.
   */
  async takeHeapSnapshot(nudge: () => Promise<unknown>): Promise<HeapSnapshot> {
    const chunks: string[] = [];
    this.#listeners.set("HeapProfiler.addHeapSnapshotChunk", (params) =>
      chunks.push((params as { chunk: string }).chunk),
    );
    try {
      await this.call("HeapProfiler.takeHeapSnapshot", { reportProgress: false }, { nudge, timeoutMs: 120_000 });
    } finally {
      this.#listeners.delete("HeapProfiler.addHeapSnapshotChunk");
    }
    return JSON.parse(chunks.join("")) as HeapSnapshot;
  }

  close(): void {
    this.#socket.close();
  }
}

/** `DevToolsSession.collectGarbage` on a connection of its own. */
export async function collectGarbage(
  inspectorPort: number,
  nudge: () => Promise<unknown>,
): Promise<{ usedSize: number; totalSize: number }> {
  const session = await DevToolsSession.open(inspectorPort);
  try {
    return await session.collectGarbage(nudge);
  } finally {
    session.close();
  }
}

/** The parts of V8's `.heapsnapshot` JSON that `heapSummary` reads. */
export interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Objects of one kind in a heap snapshot: V8's node type and its name (a constructor's, for an object). */
export interface HeapKind {
  kind: string;
  count: number;
  selfBytes: number;
}

/** A heap snapshot's nodes grouped by type and name, largest total self size first. */
export function heapSummary(snapshot: HeapSnapshot): HeapKind[] {
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((field) => fields.indexOf(field));
  const byKind = new Map<string, HeapKind>();
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const type = types[snapshot.nodes[i + typeAt!]!] ?? "?";
    // Strings, numbers and code are grouped by type alone: their "names" are their contents.
    const name =
      type === "object" || type === "closure" || type === "native"
        ? (snapshot.strings[snapshot.nodes[i + nameAt!]!] ?? "?")
        : "";
    const kind = name ? `${type} ${name}` : type;
    const entry = byKind.get(kind) ?? { kind, count: 0, selfBytes: 0 };
    entry.count += 1;
    entry.selfBytes += snapshot.nodes[i + sizeAt!]!;
    byKind.set(kind, entry);
  }
  return [...byKind.values()].toSorted((a, b) => b.selfBytes - a.selfBytes);
}
