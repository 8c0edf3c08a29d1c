import { isFileHandleShape, newFileHandle } from "../ids.js";
import { expiryOf } from "../util/expiry.js";
import { type FileAccess, type FileRunnerRpc, type NewFile, objectKey, type FileRecord } from "../file-runner/index.js";
import { UrlSigner } from "./signed-urls.js";

/**
 * What a model, a page or a task sees of a file: metadata only, never bytes.
 * @example
 * ```ts
 * import type { FileView } from "durable-mcp-server";
 *
 * const ready = (file: FileView) => file.state === "ready" && file.sha256 !== null;
 * ```
 */
export interface FileView {
  handle: string;
  name: string;
  mimeType: string;
  size: number;
  /** The verified sha256 once ready; the declared one while uploading (null when none was declared). */
  sha256: string | null;
  state: "uploading" | "ready";
  /** Bytes received so far. */
  offset: number;
  createdAt: string;
  expiresAt: string;
}

export function toFileView(file: FileRecord): FileView {
  return {
    handle: file.handle,
    name: file.name,
    mimeType: file.mimeType,
    size: file.size,
    sha256: file.sha256 ?? file.declaredSha256,
    state: file.state,
    offset: file.offset,
    createdAt: new Date(file.createdAt).toISOString(),
    expiresAt: new Date(file.expiresAt).toISOString(),
  };
}

/** Resolved file settings (see `DurableMcpOptions.files`). */
export interface FilesSettings {
  runnerBinding: string;
  bucketBinding: string;
  secretBinding: string;
  /** Where the HTTP endpoints are mounted, e.g. "/files". */
  path: string;
  maxSize: number;
  ttlMs: number;
  urlTtlMs: number;
  /** Origin for the URLs handed out; defaults to the request's. */
  publicUrl?: string;
}

export type OpenUpload = Pick<NewFile, "name" | "size" | "sha256" | "mimeType">;

export class FileTooLargeError extends Error {
  override readonly name = "FileTooLargeError";
  constructor(readonly maxSize: number) {
    super(`files may be at most ${maxSize} bytes`);
  }
}

/**
 * The files of one deployment as one request sees them: the FileRunner namespace, the bucket, the URL signer and
 * the origin URLs are minted for. Built per request by the router; shared by the HTTP endpoints, the file tools
 * and task steps.
 */
export class FileService {
  constructor(
    readonly settings: FilesSettings,
    readonly runners: DurableObjectNamespace,
    readonly bucket: R2Bucket,
    private readonly secret: string | undefined,
    private readonly origin: string,
  ) {}

  /** Needed only to mint and check URLs, so that task steps reading and writing files need no secret. */
  get signer(): UrlSigner {
    if (this.secret === undefined) {
      const name = this.settings.secretBinding;
      throw new Error(`files: no secret "${name}" to sign file URLs with (wrangler secret put ${name})`);
    }
    return signerFor(this.secret);
  }

  /** Reads the bindings named in `settings` from `env`; throws an operator-facing error when one is missing. */
  static fromEnv(settings: FilesSettings, env: unknown, requestUrl: string): FileService {
    const bindings = env as Record<string, unknown>;
    const runners = bindings[settings.runnerBinding] as DurableObjectNamespace | undefined;
    const bucket = bindings[settings.bucketBinding] as R2Bucket | undefined;
    const secret = bindings[settings.secretBinding];
    if (!runners || typeof runners.idFromName !== "function") {
      throw new Error(`files: no Durable Object binding named "${settings.runnerBinding}" (class FileRunner)`);
    }
    if (!bucket || typeof bucket.createMultipartUpload !== "function") {
      throw new Error(`files: no R2 bucket binding named "${settings.bucketBinding}"`);
    }
    const key = typeof secret === "string" && secret.length > 0 ? secret : undefined;
    return new FileService(settings, runners, bucket, key, settings.publicUrl ?? new URL(requestUrl).origin);
  }

  runner(handle: string): FileRunnerRpc {
    return this.runners.get(this.runners.idFromName(handle)) as unknown as FileRunnerRpc;
  }

  /** Starts an upload owned by `principal`. */
  async open(principal: string, spec: OpenUpload): Promise<FileRecord> {
    if (spec.size > this.settings.maxSize) throw new FileTooLargeError(this.settings.maxSize);
    const handle = newFileHandle();
    const created = await this.runner(handle).create({ ...spec, handle, principal, ttlMs: this.settings.ttlMs });
    if (!created) throw new Error(`file handle ${handle} collided with an existing file`);
    return created;
  }

  /** The file if `access` may see it; null for unknown, foreign, expired and malformed handles alike. */
  async status(access: FileAccess): Promise<FileRecord | null> {
    if (!isFileHandleShape(access.handle)) return null;
    return this.runner(access.handle).status(access);
  }

  fileUrl(handle: string): string {
    return `${this.origin}${this.settings.path}/${handle}`;
  }

  /**
   * A signed upload URL for an unfinished upload. It works as long as the upload does (its `expiresAt`), because
   * tus clients keep the URL they were given for the whole upload and do not retry a 401: a short-lived one would
   * cut off a long upload over a slow link. It stops working once the file is complete (see FileRunner).
   */
  async uploadUrl(file: FileRecord): Promise<string> {
    return this.signer.sign(this.fileUrl(file.handle), "upload", file.handle, file.expiresAt);
  }

  /** A short-lived signed download URL (`files.urlTtl`) and when it stops working. */
  async downloadUrl(handle: string): Promise<{ url: string; expiresAt: number }> {
    const expiresAt = expiryOf(Date.now(), this.settings.urlTtlMs);
    return { url: await this.signer.sign(this.fileUrl(handle), "download", handle, expiresAt), expiresAt };
  }

  /** Reads `length` bytes at `offset` of a ready file. */
  async read(file: FileRecord, offset: number, length: number): Promise<Uint8Array> {
    if (length === 0) return new Uint8Array(0);
    const object = await this.bucket.get(objectKey(file.handle), { range: { offset, length } });
    if (!object) throw new Error(`the bytes of ready file ${file.handle} are missing from the bucket`);
    return new Uint8Array(await object.arrayBuffer());
  }
}

// Importing a key is not free; a deployment has one secret, so keep its signer.
let cachedSigner: { secret: string; signer: UrlSigner } | undefined;
function signerFor(secret: string): UrlSigner {
  if (cachedSigner?.secret !== secret) cachedSigner = { secret, signer: new UrlSigner(secret) };
  return cachedSigner.signer;
}
