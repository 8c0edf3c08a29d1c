// What the files suite speaks to the lab over HTTP, from Node: deterministic test data written to a temp file with
// its sha256, tus-js-client uploads that record every request they make and count every byte they put on the wire,
// raw tus requests (including ones that break off mid-body), streamed downloads hashed as they arrive, the file
// tools over MCP, and URLs signed with the lab's test-only secret.
import { createCipheriv, createHash, createHmac, type Hash } from "node:crypto";
import { createReadStream, createWriteStream, readFileSync } from "node:fs";
import { Agent, request, type ClientRequest, type ClientRequestArgs } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { McpHttpClient, parseJsonc, type JsonObject } from "@durable-mcp/test-harness";
import * as tus from "tus-js-client";

export const MIB = 1024 * 1024;
export const GIB = 1024 * MIB;
export const TUS = { "Tus-Resumable": "1.0.0" } as const;

/** `Authorization` for principal `name` (the lab takes `Bearer <name>` as principal <name>). */
export const as = (name: string) => ({ Authorization: `Bearer ${name}` });

/** MB/s (10^6 bytes per second) for `bytes` moved in `ms`. */
export const mbps = (bytes: number, ms: number) => Math.round((bytes / 1e6 / (ms / 1000)) * 10) / 10;

/**
 * `size` pseudo-random bytes from `seed`: the AES-128-CTR keystream under a key derived from the seed, so every
 * block differs (nothing repeats or compresses) and the same seed gives the same bytes on every machine.
 */
export function keystream(seed: string): (length: number) => Buffer {
  const key = createHash("sha256").update(`reliability-lab files ${seed}`).digest().subarray(0, 16);
  const cipher = createCipheriv("aes-128-ctr", key, Buffer.alloc(16));
  return (length) => cipher.update(Buffer.alloc(length));
}

/** Deterministic bytes in memory, with their sha256. */
export function testBytes(seed: string, size: number): { bytes: Buffer; sha256: string } {
  const bytes = keystream(seed)(size);
  return { bytes, sha256: createHash("sha256").update(bytes).digest("hex") };
}

/** Writes `size` deterministic bytes to `path` in 4 MiB blocks, hashing them on the way; returns the sha256. */
export async function writeTestFile(path: string, seed: string, size: number): Promise<string> {
  const next = keystream(seed);
  const hash = createHash("sha256");
  const out = createWriteStream(path);
  for (let at = 0; at < size; at += 4 * MIB) {
    const block = next(Math.min(4 * MIB, size - at));
    hash.update(block);
    if (!out.write(block)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return hash.digest("hex");
}

/** An HTTP agent that counts every byte written to its sockets (request lines, headers and bodies). */
export class CountingAgent extends Agent {
  #closed = 0;
  readonly #live = new Set<Socket>();

  constructor() {
    super({ keepAlive: true });
  }

  override createConnection(
    options: ClientRequestArgs,
    callback?: (error: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const socket = super.createConnection(options, callback) as Socket;
    this.#live.add(socket);
    socket.once("close", () => {
      this.#live.delete(socket);
      this.#closed += socket.bytesWritten;
    });
    return socket;
  }

  /** Bytes written so far, over every socket this agent opened. */
  get bytesWritten(): number {
    let total = this.#closed;
    for (const socket of this.#live) total += socket.bytesWritten;
    return total;
  }
}

/** One request tus-js-client made, as the suite saw it. */
export interface TusRequestRecord {
  method: string;
  /** Upload-Offset sent (PATCH) or received (HEAD, PATCH responses). */
  offset: number | null;
  responseOffset: number | null;
  status: number | null;
  error: string | null;
  startedAt: number;
  /** When the body had been handed to the socket in full (ClientRequest "finish"). */
  bodyDoneAt: number | null;
  respondedAt: number | null;
}

/** tus-js-client's own Node HTTP stack, on a CountingAgent, recording every request it makes. */
export class RecordingStack implements tus.HttpStack {
  readonly agent = new CountingAgent();
  readonly records: TusRequestRecord[] = [];
  readonly #inner = new tus.DefaultHttpStack({ agent: this.agent });

  getName(): string {
    return "RecordingStack";
  }

  createRequest(method: string, url: string): tus.HttpRequest {
    const req = this.#inner.createRequest(method, url);
    const send = req.send.bind(req);
    req.send = (body: unknown) => {
      const sent = req.getHeader("Upload-Offset");
      const record: TusRequestRecord = {
        method: req.getMethod(),
        offset: sent === undefined ? null : Number(sent),
        responseOffset: null,
        status: null,
        error: null,
        startedAt: performance.now(),
        bodyDoneAt: null,
        respondedAt: null,
      };
      this.records.push(record);
      const pending = send(body);
      // The stack builds its ClientRequest synchronously inside send().
      (req.getUnderlyingObject() as ClientRequest | null)?.once("finish", () => {
        record.bodyDoneAt = performance.now();
      });
      return pending.then(
        (res) => {
          record.respondedAt = performance.now();
          record.status = res.getStatus();
          const offset = res.getHeader("Upload-Offset");
          record.responseOffset = offset === undefined ? null : Number(offset);
          return res;
        },
        (error: unknown) => {
          record.respondedAt = performance.now();
          record.error = String(error);
          throw error;
        },
      );
    };
    return req;
  }
}

export interface TusRun {
  upload: tus.Upload;
  stack: RecordingStack;
  /** Resolves when tus-js-client calls onSuccess, rejects on onError; never settles after `upload.abort()`. */
  done: Promise<void>;
}

/** Retries across a restart of wrangler dev (about 2 s here) with room to spare: 33 s in all. */
export const RETRY_DELAYS = [0, 200, 500, 1000, 1000, 2000, 2000, 3000, 3000, 5000, 5000, 10_000];

/**
 * Starts a tus-js-client upload of `source` (a Buffer, or a path streamed from disk) to `${origin}/files` as
 * `principal` (or to `uploadUrl`, resuming), on a RecordingStack.
 */
export function startTusUpload(options: {
  origin: string;
  principal: string;
  source: Buffer | { path: string };
  size: number;
  sha256: string;
  chunkSize: number;
  uploadUrl?: string;
  filename?: string;
  onProgress?: (sent: number, total: number) => void;
  onChunkComplete?: (chunk: number, accepted: number, total: number) => void;
}): TusRun {
  const stack = new RecordingStack();
  // tus-js-client takes an fs.ReadStream and re-reads each chunk from the file by path (its FileSource).
  const input = Buffer.isBuffer(options.source) ? options.source : createReadStream(options.source.path);
  let upload!: tus.Upload;
  const done = new Promise<void>((resolve, reject) => {
    upload = new tus.Upload(input as unknown as Buffer, {
      ...(options.uploadUrl ? { uploadUrl: options.uploadUrl } : { endpoint: `${options.origin}/files` }),
      uploadSize: options.size,
      chunkSize: options.chunkSize,
      metadata: {
        filename: options.filename ?? "data.bin",
        filetype: "application/octet-stream",
        sha256: options.sha256,
      },
      headers: as(options.principal),
      retryDelays: RETRY_DELAYS,
      storeFingerprintForResuming: false,
      httpStack: stack,
      onProgress: options.onProgress ?? null,
      onChunkComplete: options.onChunkComplete ?? null,
      onSuccess: () => resolve(),
      onError: reject,
    });
  });
  upload.start();
  return { upload, stack, done };
}

/** The handle in a file URL (`…/files/<handle>?…`). */
export const handleOf = (url: string) => new URL(url).pathname.split("/").at(-1)!;

/** tus HEAD: the status and the upload's offset and length. */
export async function tusHead(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; offset: number | null; length: number | null }> {
  const response = await fetch(url, { method: "HEAD", headers: { ...TUS, ...headers } });
  const offset = response.headers.get("Upload-Offset");
  const length = response.headers.get("Upload-Length");
  return {
    status: response.status,
    offset: offset === null ? null : Number(offset),
    length: length === null ? null : Number(length),
  };
}

/** tus POST (creation) with fetch; returns the status and the upload URL. */
export async function tusCreate(
  origin: string,
  principal: string,
  size: number,
  metadata: Record<string, string> = {},
): Promise<{ status: number; url: string; uploadExpires: string | null }> {
  const encoded = Object.entries(metadata)
    .map(([key, value]) => `${key} ${Buffer.from(value).toString("base64")}`)
    .join(",");
  const response = await fetch(`${origin}/files`, {
    method: "POST",
    headers: {
      ...TUS,
      ...as(principal),
      "Upload-Length": String(size),
      ...(encoded ? { "Upload-Metadata": encoded } : {}),
    },
  });
  await response.body?.cancel();
  return {
    status: response.status,
    url: response.headers.get("Location") ?? "",
    uploadExpires: response.headers.get("Upload-Expires"),
  };
}

/** A PATCH with a whole body, through fetch; a ReadableStream body goes chunked, without Content-Length. */
export async function tusPatch(
  url: string,
  offset: number,
  body: Uint8Array | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Promise<{ status: number; offset: number | null; text: string }> {
  const response = await fetch(url, {
    duplex: "half",
    method: "PATCH",
    headers: {
      ...TUS,
      "Upload-Offset": String(offset),
      "Content-Type": "application/offset+octet-stream",
      ...headers,
    },
    body,
  });
  const value = response.headers.get("Upload-Offset");
  return { status: response.status, offset: value === null ? null : Number(value), text: await response.text() };
}

/**
 * A PATCH that declares `declared` bytes (Content-Length) but only ever sends `body`, on a raw socket. When the
 * server has answered by then, returns its status; otherwise, once `before()` resolves (the server has seen what
 * it needs to), the socket is destroyed mid-body and null comes back.
 */
export async function truncatedPatch(
  url: string,
  offset: number,
  declared: number,
  body: Uint8Array,
  before: () => Promise<void>,
  headers: Record<string, string> = {},
): Promise<number | null> {
  const target = new URL(url);
  const socket = connect({ host: target.hostname, port: Number(target.port) });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  let answer: number | null = null;
  socket.on("data", (data: Buffer) => {
    const match = /^HTTP\/1\.1 (\d{3})/.exec(data.toString("latin1"));
    if (match && answer === null) answer = Number(match[1]);
  });
  socket.on("error", () => {});
  const lines = [
    `PATCH ${target.pathname}${target.search} HTTP/1.1`,
    `Host: ${target.host}`,
    "Tus-Resumable: 1.0.0",
    `Upload-Offset: ${offset}`,
    "Content-Type: application/offset+octet-stream",
    `Content-Length: ${declared}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    "",
    "",
  ];
  await new Promise<void>((resolve) => socket.write(lines.join("\r\n"), () => resolve()));
  await new Promise<void>((resolve) => socket.write(body, () => resolve()));
  await before();
  socket.destroy();
  return answer;
}

export interface StreamedDownload {
  status: number;
  headers: Headers;
  bytes: number;
  ms: number;
}

/**
 * GETs `url` and feeds the body into `hash` as it arrives (never holding the file in memory). With `stopAfter`,
 * stops reading there (hashing exactly that many bytes) and aborts the connection: a download cut short.
 */
export async function streamInto(
  hash: Hash,
  url: string,
  headers: Record<string, string> = {},
  stopAfter?: number,
): Promise<StreamedDownload> {
  const started = performance.now();
  const abort = new AbortController();
  const response = await fetch(url, { headers, signal: abort.signal });
  let bytes = 0;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = stopAfter === undefined ? value.byteLength : Math.min(value.byteLength, stopAfter - bytes);
      hash.update(value.subarray(0, take));
      bytes += take;
      if (stopAfter !== undefined && bytes >= stopAfter) {
        abort.abort();
        await reader.cancel().catch(() => {});
        break;
      }
    }
  }
  return { status: response.status, headers: response.headers, bytes, ms: performance.now() - started };
}

/** PUTs the file at `path` (`size` bytes, with Content-Length) to `url`; returns the status, body and time. */
export function putFile(
  url: string,
  path: string,
  size: number,
): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "PUT", headers: { "Content-Length": String(size) } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - started }));
    });
    req.on("error", reject);
    createReadStream(path).pipe(req);
  });
}

/** A file tool called as `principal`; the tool result (an error envelope in structuredContent.error). */
export async function fileTool(
  mcpUrl: string,
  principal: string,
  name: string,
  args: JsonObject,
): Promise<{ isError?: boolean; structuredContent: Record<string, unknown> }> {
  const client = new McpHttpClient(mcpUrl, { clientInfo: { name: "reliability-lab-files", version: "1.0.0" } });
  const result = await client.call("tools/call", { name, arguments: args }, { headers: as(principal) });
  return result as unknown as { isError?: boolean; structuredContent: Record<string, unknown> };
}

const labRoot = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The lab's test-only FILE_URL_SECRET, read from its wrangler.jsonc. */
export function labUrlSecret(): string {
  const config = parseJsonc(readFileSync(join(labRoot, "wrangler.jsonc"), "utf8")) as { vars: Record<string, string> };
  return config.vars.FILE_URL_SECRET!;
}

/**
 * A file URL signed the way the library signs them (HMAC-SHA256 over scope, handle and expiry, base64url), with
 * any expiry: the suite uses it to make a correctly signed URL that has expired.
 */
export function signFileUrl(
  origin: string,
  handle: string,
  scope: "upload" | "download",
  expSeconds: number,
  secret: string,
): string {
  const sig = createHmac("sha256", secret)
    .update(`durable-mcp-file/v1\n${scope}\n${handle}\n${expSeconds}`)
    .digest("base64url");
  return `${origin}/files/${handle}?exp=${expSeconds}&sig=${sig}`;
}
