// The platform floor of the bench server (src/index.ts routes `/floor/*` here after src/files-floor.ts): a `Floor`
// Durable Object and the routes that do the least a request, a Durable Object call, a SQLite write or a log line
// can do, so the bench can set each figure beside what the runtime itself costs.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "./index.js";

/** A step result is JSON of at most 1 MiB, so a string result may carry 1 MiB minus its two quotes. */
export const MAX_PAYLOAD = 1_048_574;

/**
 * The storage floor: one SQLite Durable Object with a one-column table. Its methods do nothing but what their
 * names say, so their cost is the platform's.
 */
export class Floor extends DurableObject<Env> {
  #table = false;
  #alarmed: (() => void) | undefined;
  /** The routed multipart floor's running digests, by object key (one Floor object per upload). */
  readonly #digests = new Map<string, { stream: DigestStream; writer: WritableStreamDefaultWriter<ArrayBufferView> }>();

  /** A call that touches nothing. */
  ping(): number {
    return 1;
  }

  /**
   * `n` INSERTs with no await between them: they coalesce into one implicit transaction, committed once after
   * the call, and the reply waits for that commit (the output gate). The caller times the whole call from
   * outside; `insideMs` is the loop alone, on workerd's clock (whole milliseconds).
   */
  insert(n: number, bytes: number): { n: number; insideMs: number } {
    const sql = this.#sql();
    const value = "x".repeat(bytes);
    const begin = performance.now();
    for (let i = 0; i < n; i++) sql.exec("INSERT INTO rows (v) VALUES (?)", value);
    return { n, insideMs: performance.now() - begin };
  }

  /** `n` times: one INSERT, then an awaited storage.sync() (the commit made durable before going on). */
  async insertSynced(n: number, bytes: number): Promise<{ n: number; insideMs: number }> {
    const sql = this.#sql();
    const value = "x".repeat(bytes);
    const begin = performance.now();
    for (let i = 0; i < n; i++) {
      sql.exec("INSERT INTO rows (v) VALUES (?)", value);
      await this.ctx.storage.sync();
    }
    return { n, insideMs: performance.now() - begin };
  }

  /** Arms the alarm for now and resolves once alarm() has started: the dispatch latency of an alarm, in ms. */
  async alarmDispatch(): Promise<number> {
    const fired = new Promise<void>((resolve) => (this.#alarmed = resolve));
    const begin = performance.now();
    await this.ctx.storage.setAlarm(Date.now());
    await fired;
    return performance.now() - begin;
  }

  override async alarm(): Promise<void> {
    this.#alarmed?.();
    this.#alarmed = undefined;
  }

  /**
   * One part of the routed multipart floor: the least a PATCH that goes through an object costs where the object keeps
   * the upload's running SHA-256 across PATCHes. The body, streamed in from the Worker, is read straight into one
   * part-sized buffer (BYOB, no copy), the buffer is fed to the digest this object keeps for `key` and sent as R2's
   * part; nothing is checked or recorded, and the part must be the whole body.
   */
  async routedPart(
    key: string,
    uploadId: string,
    part: number,
    size: number,
    body: ReadableStream<Uint8Array>,
  ): Promise<R2UploadedPart> {
    let digest = this.#digests.get(key);
    if (!digest) {
      const stream = new crypto.DigestStream("SHA-256");
      digest = { stream, writer: stream.getWriter() };
      this.#digests.set(key, digest);
    }
    const reader = body.getReader({ mode: "byob" });
    let backing = new ArrayBuffer(size);
    let at = 0;
    while (at < size) {
      const { value, done } = await reader.read(new Uint8Array(backing, at, size - at));
      if (done || !value) break;
      // A BYOB read hands the memory back in a new ArrayBuffer (the one passed in is detached).
      backing = value.buffer as ArrayBuffer;
      at += value.byteLength;
    }
    reader.releaseLock();
    if (at !== size) throw new Error(`routed part ${part}: ${at} of ${size} bytes`);
    const bytes = new Uint8Array(backing, 0, size);
    await digest.writer.write(bytes);
    return this.env.FILES.resumeMultipartUpload(key, uploadId).uploadPart(part, bytes);
  }

  /** Completes the routed multipart floor's upload: its size and the whole object's SHA-256 (hex). */
  async routedComplete(
    key: string,
    uploadId: string,
    parts: R2UploadedPart[],
  ): Promise<{ size: number; sha256: string }> {
    const digest = this.#digests.get(key);
    if (!digest) throw new Error(`no routed upload of ${key} in this object`);
    this.#digests.delete(key);
    await digest.writer.close();
    const sha256 = [...new Uint8Array(await digest.stream.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    const object = await this.env.FILES.resumeMultipartUpload(key, uploadId).complete(parts);
    return { size: object.size, sha256 };
  }

  /** Spins the CPU with no I/O and reports how far the clock moved meanwhile (0 where it stands still). */
  clock(iterations: number): { dateMs: number; perfMs: number } {
    const date = Date.now();
    const perf = performance.now();
    let x = 0;
    for (let i = 0; i < iterations; i++) x = (x + i) % 7919;
    if (x < 0) throw new Error("unreachable");
    return { dateMs: Date.now() - date, perfMs: performance.now() - perf };
  }

  #sql(): SqlStorage {
    const sql = this.ctx.storage.sql;
    if (!this.#table) {
      sql.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT NOT NULL)");
      this.#table = true;
    }
    return sql;
  }
}

export const json = (value: unknown) => Response.json(value, { headers: { "cache-control": "no-store" } });
const int = (url: URL, name: string, fallback: number, max: number) => {
  const value = Number(url.searchParams.get(name) ?? fallback);
  return Number.isInteger(value) && value >= 0 && value <= max ? value : fallback;
};

export async function floor(request: Request, url: URL, env: Env): Promise<Response> {
  const named = (name: string) => env.FLOOR.get(env.FLOOR.idFromName(name));
  switch (url.pathname) {
    case "/floor/noop":
      // An HTTP request that reaches the Worker and nothing else.
      return new Response("ok");
    case "/floor/http":
      // An HTTP request that makes one Durable Object call (a warm object, no storage): the HTTP floor.
      await named("http").ping();
      return new Response("ok");
    case "/floor/http-post": {
      // The HTTP floor for a POST shaped like a tasks/get (the same headers and JSON body): the body read and
      // parsed, one call to the warm object. Information beside the HTTP floor, which the targets are relative to.
      if (request.method !== "POST") return new Response("POST only", { status: 405 });
      const body = (await request.json()) as { params?: { taskId?: unknown } } | null;
      if (typeof body?.params?.taskId !== "string") return new Response("no params.taskId", { status: 400 });
      await named("http").ping();
      // `?answerBytes=n`: answers n bytes of JSON instead (as long as a tasks/get's answer, `pnpm bench:get`).
      const answerBytes = int(url, "answerBytes", 0, MAX_PAYLOAD);
      if (answerBytes < 2) return new Response("ok");
      return new Response(JSON.stringify("x".repeat(answerBytes - 2)), {
        headers: { "content-type": "application/json" },
      });
    }
    case "/floor/http-post-write": {
      // The least a create that commits its task's record can be (bench/table.ts): the POST floor's body read and
      // parsed, then one call to a warm object that commits one row before it answers (the output gate).
      if (request.method !== "POST") return new Response("POST only", { status: 405 });
      const body = (await request.json()) as { params?: unknown } | null;
      if (typeof body?.params !== "object") return new Response("no params", { status: 400 });
      await named("post-write").insert(1, 0);
      return new Response("ok");
    }
    case "/floor/runner-get-post": {
      // The least a tasks/get can be (`pnpm bench:get`): the POST floor's body read and parsed, then the task's own
      // TaskRunner asked for the answer text (`getText`, or `get` on a library without it) and that text answered.
      // No checks at all; bench-only: it trusts the task id in the body.
      if (request.method !== "POST") return new Response("POST only", { status: 405 });
      const body = (await request.json()) as { params?: { taskId?: unknown } } | null;
      const taskId = body?.params?.taskId;
      if (typeof taskId !== "string") return new Response("no params.taskId", { status: 400 });
      const namespace = url.searchParams.get("quiet") === "0" ? env.TASK_RUNNER : env.QUIET_TASK_RUNNER;
      const runner = namespace.get(namespace.idFromName(taskId)) as unknown as {
        getText?(access: { taskId: string; principal: string }): Promise<{ body: string } | null>;
        get(access: { taskId: string; principal: string }): Promise<unknown>;
      };
      const access = { taskId, principal: "anonymous" };
      let answer: string | undefined;
      try {
        answer = (await runner.getText!(access))?.body;
      } catch {
        answer = JSON.stringify(await runner.get(access));
      }
      return new Response(answer ?? "unknown task", {
        status: answer ? 200 : 404,
        headers: { "content-type": "application/json" },
      });
    }
    case "/floor/runner-get": {
      // One RPC to a task's own TaskRunner, the `get` a tasks/get makes, with nothing of the library around it
      // (`pnpm bench:get`): the Durable Object's share of a tasks/get. Bench-only: it trusts the task id given.
      const taskId = url.searchParams.get("taskId") ?? "";
      const runner = env.QUIET_TASK_RUNNER.get(env.QUIET_TASK_RUNNER.idFromName(taskId)) as unknown as {
        get(access: { taskId: string; principal: string }): Promise<{ status: string } | null>;
      };
      // `principal=…` other than "anonymous" finds no task: the RPC and the record's read, without the view.
      const principal = url.searchParams.get("principal") ?? "anonymous";
      const task = await runner.get({ taskId, principal });
      return new Response(task || principal !== "anonymous" ? "ok" : "unknown task", {
        status: task || principal !== "anonymous" ? 200 : 404,
      });
    }
    case "/floor/http-new":
      // The same call to an object that did not exist before.
      await env.FLOOR.get(env.FLOOR.newUniqueId()).ping();
      return new Response("ok");
    case "/floor/http-write":
      // A new object that creates its table and commits one row before it answers: what tools/call must do.
      await env.FLOOR.get(env.FLOOR.newUniqueId()).insert(1, 0);
      return new Response("ok");
    case "/floor/rpc": {
      // `n` sequential Worker→DO RPCs timed inside the Worker.
      const n = int(url, "n", 100, 10_000);
      const stub = named("rpc");
      await stub.ping();
      const begin = performance.now();
      for (let i = 0; i < n; i++) await stub.ping();
      return json({ n, totalMs: performance.now() - begin });
    }
    case "/floor/insert":
      return json(await named("insert").insert(int(url, "n", 0, 100_000), int(url, "bytes", 0, MAX_PAYLOAD)));
    case "/floor/insert-synced":
      return json(await named("synced").insertSynced(int(url, "n", 100, 10_000), int(url, "bytes", 0, MAX_PAYLOAD)));
    case "/floor/log": {
      // `n` console.log lines shaped like a task event line.
      const n = int(url, "n", 0, 10_000);
      const begin = performance.now();
      for (let i = 0; i < n; i++) {
        console.log(JSON.stringify({ event: "step_finished", taskId: "floor", tool: "floor", step: `step ${i}` }));
      }
      return json({ n, insideMs: performance.now() - begin });
    }
    case "/floor/alarm": {
      // `n` alarms armed for "now", one after another, each timed from setAlarm() to alarm() starting.
      const stub = named("alarm");
      const n = int(url, "n", 10, 1000);
      const times: number[] = [];
      for (let i = 0; i < n; i++) times.push(await stub.alarmDispatch());
      return json({ n, times });
    }
    case "/floor/clock":
      return json(await named("clock").clock(int(url, "iterations", 10_000_000, 1_000_000_000)));
    default:
      return new Response("Not found", { status: 404 });
  }
}
