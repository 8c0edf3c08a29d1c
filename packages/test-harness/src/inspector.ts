// Chrome DevTools Protocol calls to the Worker's isolate through wrangler dev's inspector port (the proxy relays them
// to the runtime workerd's inspector). Used to read the isolate's V8 heap and to force a garbage collection before a
// memory reading, so that what the runtime holds is told apart from garbage not yet collected.
export interface InspectorCall {
  method: string;
  params?: Record<string, unknown>;
}

/**
 * Sends `calls` one after another on one DevTools connection and returns their results in order. `nudge`, when
 * given, is called every `NUDGE_MS` while a call is unanswered: some calls (`HeapProfiler.collectGarbage`) are only
 * carried out, and answered, once the isolate next runs something, and an idle workerd isolate runs nothing until a
 * request reaches it.
 */
export async function inspectIsolate(
  inspectorPort: number,
  calls: InspectorCall[],
  { nudge, timeoutMs = 30_000 }: { nudge?: () => Promise<unknown>; timeoutMs?: number } = {},
): Promise<unknown[]> {
  // The proxy only admits DevTools connections from a local Origin. (`headers` is undici's extension to WebSocket.)
  const init = { headers: { origin: "http://localhost" } } as unknown as string[];
  const socket = new WebSocket(`ws://127.0.0.1:${inspectorPort}/ws`, init);
  const results: unknown[] = [];
  let nudging: ReturnType<typeof setInterval> | undefined;
  try {
    await new Promise<void>((done, fail) => {
      const timer = setTimeout(
        () => fail(new Error(`inspector: no answer to ${calls[results.length]?.method} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const send = () => {
        const call = calls[results.length];
        if (!call) {
          clearTimeout(timer);
          done();
          return;
        }
        socket.send(JSON.stringify({ id: results.length + 1, method: call.method, params: call.params ?? {} }));
      };
      socket.addEventListener("error", () => {
        clearTimeout(timer);
        fail(new Error(`inspector: cannot connect to port ${inspectorPort}`));
      });
      socket.addEventListener("open", () => {
        send();
        if (nudge) {
          nudging = setInterval(() => {
            nudge().catch((error: unknown) => {
              clearTimeout(timer);
              fail(new Error(`inspector: the nudge failed: ${String(error)}`));
            });
          }, NUDGE_MS);
        }
      });
      socket.addEventListener("message", (event) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: unknown };
        // Events (console lines, etc.) carry no id; only the answer to the call in flight moves on.
        if (message.id !== results.length + 1) return;
        if (message.error !== undefined) {
          clearTimeout(timer);
          fail(new Error(`inspector: ${calls[results.length]!.method} failed: ${JSON.stringify(message.error)}`));
          return;
        }
        results.push(message.result);
        send();
      });
    });
  } finally {
    clearInterval(nudging);
    socket.close();
  }
  return results;
}

const NUDGE_MS = 500;

/**
 * Forces a full garbage collection of the isolate and returns its V8 heap after it, in bytes. `nudge` must make the
 * isolate run something (e.g. fetch any path of the Worker): V8 carries the collection out in a task of the isolate,
 * which workerd runs only when it next enters it (measured: no answer in 30 s without a request, and then the answer
 * during the first one).
 */
export async function collectGarbage(
  inspectorPort: number,
  nudge: () => Promise<unknown>,
): Promise<{ usedSize: number; totalSize: number }> {
  const results = await inspectIsolate(
    inspectorPort,
    [{ method: "HeapProfiler.collectGarbage" }, { method: "Runtime.getHeapUsage" }],
    { nudge },
  );
  return results[1] as { usedSize: number; totalSize: number };
}
