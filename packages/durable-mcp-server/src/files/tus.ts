import { isFileHandleShape } from "../ids.js";
import { fromBase64 } from "../util/encoding.js";
import { corsHeaders, plain } from "../util/http.js";
import type { FileAccess, FileRecord, ChunkChecksum } from "../file-runner/index.js";
import { FileTooLargeError, type FileService } from "./file-service.js";

/**
 * The tus 1.0.0 upload protocol (core + creation, checksum, termination, expiration), so off-the-shelf clients
 * such as tus-js-client and Uppy upload unmodified. https://tus.io/protocols/resumable-upload
 */
export const TUS_VERSION = "1.0.0";
const EXTENSIONS = "creation,checksum,termination,expiration";
const HEX_SHA256 = /^[0-9a-f]{64}$/;
/** `Upload-Checksum` algorithms (the checksum extension requires sha1), with their WebCrypto names and sizes. */
const CHECKSUMS: Record<string, { algorithm: ChunkChecksum["algorithm"]; bytes: number }> = {
  sha1: { algorithm: "SHA-1", bytes: 20 },
  sha256: { algorithm: "SHA-256", bytes: 32 },
};

/** OPTIONS: what this server supports (also answers CORS preflights). */
export function tusOptions(service: FileService): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(),
      "Tus-Resumable": TUS_VERSION,
      "Tus-Version": TUS_VERSION,
      "Tus-Extension": EXTENSIONS,
      "Tus-Max-Size": String(service.settings.maxSize),
      "Tus-Checksum-Algorithm": Object.keys(CHECKSUMS).join(","),
    },
  });
}

/** Requests other than OPTIONS must speak our version: 412 otherwise. */
export function checkTusVersion(request: Request): Response | null {
  const version = request.headers.get("Tus-Resumable");
  if (version === TUS_VERSION) return null;
  return tusResponse(412, { "Tus-Version": TUS_VERSION }, `Tus-Resumable must be ${TUS_VERSION}`);
}

/** POST: creates an upload owned by `principal`; Location is a signed URL for it, valid as long as the upload. */
export async function tusCreate(request: Request, service: FileService, principal: string): Promise<Response> {
  if (request.headers.has("Upload-Defer-Length")) return tusResponse(400, {}, "Upload-Defer-Length is not supported");
  const length = parseNonNegative(request.headers.get("Upload-Length"));
  if (length === null) return tusResponse(400, {}, "Upload-Length must be a non-negative integer");
  const metadata = parseMetadata(request.headers.get("Upload-Metadata"));
  if (!metadata) return tusResponse(400, {}, "Upload-Metadata is malformed");
  const sha256 = metadata.get("sha256")?.toLowerCase() ?? null;
  if (sha256 !== null && !HEX_SHA256.test(sha256)) {
    return tusResponse(400, {}, "Upload-Metadata sha256 must be 64 hex digits");
  }
  const name = metadata.get("filename") ?? metadata.get("name") ?? "upload";
  const mimeType = metadata.get("filetype") ?? metadata.get("type") ?? "application/octet-stream";
  let file: FileRecord;
  try {
    file = await service.open(principal, { name, mimeType, size: length, sha256 });
  } catch (error) {
    if (error instanceof FileTooLargeError) return tusResponse(413, {}, error.message);
    throw error;
  }
  const url = await service.uploadUrl(file);
  return tusResponse(201, { Location: url, "Upload-Expires": httpDate(file.expiresAt) });
}

/** HEAD: where the upload stands. */
export async function tusHead(service: FileService, access: FileAccess): Promise<Response> {
  const file = await service.status(access);
  if (!file) return notFound();
  return tusResponse(200, { ...uploadHeaders(file), "Upload-Length": String(file.size), "Cache-Control": "no-store" });
}

/** PATCH: appends the body at Upload-Offset. */
export async function tusPatch(request: Request, service: FileService, access: FileAccess): Promise<Response> {
  const contentType = request.headers.get("Content-Type")?.split(";")[0]?.trim().toLowerCase();
  if (contentType !== "application/offset+octet-stream") {
    return tusResponse(415, {}, "Content-Type must be application/offset+octet-stream");
  }
  const offset = parseNonNegative(request.headers.get("Upload-Offset"));
  if (offset === null) return tusResponse(400, {}, "Upload-Offset must be a non-negative integer");
  const checksum = parseChecksum(request.headers.get("Upload-Checksum"));
  if (checksum === "unsupported") {
    return tusResponse(400, {}, `Upload-Checksum must use one of ${Object.keys(CHECKSUMS).join(", ")}`);
  }
  if (checksum === "malformed") return tusResponse(400, {}, "Upload-Checksum is malformed");
  if (!isFileHandleShape(access.handle)) return notFound();
  const length = parseNonNegative(request.headers.get("Content-Length"));
  const body = request.body ?? new Response(new Uint8Array(0)).body!;
  // The body streams on to the upload's FileRunner, which writes it to R2 and feeds the whole-file digest it keeps
  // in memory between PATCHes (a native DigestStream: its state cannot be saved, so it cannot live here).
  const outcome = await service.runner(access.handle).write(access, offset, body, checksum, length);
  if (!outcome) return notFound();
  const headers = uploadHeaders(outcome.file);
  switch (outcome.kind) {
    case "written":
    case "interrupted":
      return tusResponse(204, headers);
    case "offset_mismatch":
      return tusResponse(409, headers, `Upload-Offset ${offset} does not match the upload's offset`);
    case "checksum_mismatch":
      return tusResponse(460, headers, "Upload-Checksum does not match the chunk; it was discarded");
    case "too_long":
      return tusResponse(413, headers, "the chunk runs past Upload-Length; none of it was kept");
    case "digest_mismatch":
      return tusResponse(
        460,
        headers,
        `the file's sha256 is ${outcome.actual}, not the declared one; the upload was reset to offset 0`,
      );
  }
}

/** DELETE: termination. */
export async function tusDelete(service: FileService, access: FileAccess): Promise<Response> {
  // terminate() answers false for unknown, foreign and expired handles alike: one call decides.
  const removed = isFileHandleShape(access.handle) && (await service.runner(access.handle).terminate(access));
  return removed ? tusResponse(204, {}) : notFound();
}

function uploadHeaders(file: FileRecord): Record<string, string> {
  return { "Upload-Offset": String(file.offset), "Upload-Expires": httpDate(file.expiresAt) };
}

function tusResponse(status: number, headers: Record<string, string>, message?: string): Response {
  return plain(status, message, { ...headers, "Tus-Resumable": TUS_VERSION });
}

function notFound(): Response {
  return tusResponse(404, {}, "Not found");
}

function httpDate(ms: number): string {
  return new Date(ms).toUTCString();
}

function parseNonNegative(value: string | null): number | null {
  if (value === null || !/^\d{1,16}$/.test(value)) return null;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : null;
}

/** `key base64,key2 base64,...` → decoded values; null when malformed. */
function parseMetadata(header: string | null): Map<string, string> | null {
  const metadata = new Map<string, string>();
  if (!header) return metadata;
  for (const pair of header.split(",")) {
    const [key, value, extra] = pair.trim().split(" ");
    if (!key || extra !== undefined || !/^[\x21-\x7e]+$/.test(key)) return null;
    try {
      metadata.set(
        key,
        value === undefined
          ? ""
          : new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64(value)),
      );
    } catch {
      return null;
    }
  }
  return metadata;
}

function parseChecksum(header: string | null): ChunkChecksum | null | "unsupported" | "malformed" {
  if (header === null) return null;
  const [name, value, extra] = header.trim().split(" ");
  if (!name || !value || extra !== undefined) return "malformed";
  const known = Object.hasOwn(CHECKSUMS, name.toLowerCase()) ? CHECKSUMS[name.toLowerCase()]! : null;
  if (!known) return "unsupported";
  try {
    const digest = fromBase64(value);
    return digest.byteLength === known.bytes ? { algorithm: known.algorithm, digest } : "malformed";
  } catch {
    return "malformed";
  }
}
