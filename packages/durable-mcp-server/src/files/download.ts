import { objectKey, type FileAccess } from "./file-runner.js";
import type { FileService } from "./file-service.js";
import { plain } from "./http-common.js";

/**
 * GET/HEAD of a ready file: the bytes from R2 with `Content-Length`, `Content-Type`, a strong `ETag` (its sha256),
 * and single `Range` requests answered 206 (several ranges get the whole file, as RFC 9110 allows).
 */
export async function serveDownload(request: Request, service: FileService, access: FileAccess): Promise<Response> {
  const file = await service.status(access);
  if (!file) return plain(404, "Not found");
  if (file.state !== "ready") return plain(409, "The upload is not complete yet");
  const etag = `"${file.sha256}"`;
  const headers: Record<string, string> = {
    "Content-Type": file.mimeType,
    ETag: etag,
    "Accept-Ranges": "bytes",
    "Cache-Control": "private, max-age=0",
    "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`,
    // The type is whatever the uploader declared: never let a file run as a page of this origin.
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
  };
  if (request.headers.get("If-None-Match") === etag) return plain(304, undefined, headers);
  const range = parseRange(request.headers.get("Range"), file.size);
  if (range === "unsatisfiable") {
    return plain(416, "Range not satisfiable", { ...headers, "Content-Range": `bytes */${file.size}` });
  }
  const status = range ? 206 : 200;
  const slice = range ?? { offset: 0, length: file.size };
  if (range) headers["Content-Range"] = `bytes ${range.offset}-${range.offset + range.length - 1}/${file.size}`;
  headers["Content-Length"] = String(slice.length);
  if (request.method === "HEAD" || slice.length === 0)
    return new Response(null, { status, headers: withCors(headers) });
  const object = await service.bucket.get(objectKey(file.handle), range ? { range } : {});
  if (!object) throw new Error(`the bytes of ready file ${file.handle} are missing from the bucket`);
  return new Response(object.body, { status, headers: withCors(headers) });
}

function withCors(headers: Record<string, string>): Headers {
  const merged = new Headers(plain(200, undefined).headers);
  for (const [name, value] of Object.entries(headers)) merged.set(name, value);
  return merged;
}

/** One `bytes=` range → offset and length; null to send everything. */
function parseRange(header: string | null, size: number): { offset: number; length: number } | null | "unsatisfiable" {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first, last] = match;
  if (first === "" && last === "") return null;
  if (first === "") {
    const suffix = Math.min(Number(last), size);
    return suffix === 0 ? "unsatisfiable" : { offset: size - suffix, length: suffix };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { offset: start, length: end - start + 1 };
}
