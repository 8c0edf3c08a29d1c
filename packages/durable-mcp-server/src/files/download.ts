import { type FileAccess, objectKey } from "../file-runner/index.js";
import type { FileService } from "./file-service.js";
import { plain, withCorsHeaders } from "../util/http.js";

/**
 * GET/HEAD of a ready file: the bytes from R2 with `Content-Length`, `Content-Type`, a strong `ETag` (its sha256),
 * and one `Range` answered as RFC 9110 §14 says: 206 when satisfiable, 416 when not, and the whole file (200) for a
 * Range that is malformed, asks for several ranges, or comes with an `If-Range` that is not the current ETag.
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
  const range = ifRangeHolds(request.headers.get("If-Range"), etag)
    ? parseRange(request.headers.get("Range"), file.size)
    : null;
  if (range === "unsatisfiable") {
    // The answer is a short text, not the file: it keeps the security headers but not the file's type.
    const refusal: Record<string, string> = { ...headers, "Content-Range": `bytes */${file.size}` };
    delete refusal["Content-Type"];
    delete refusal["Content-Disposition"];
    return plain(416, "Range not satisfiable", refusal);
  }
  const status = range ? 206 : 200;
  const slice = range ?? { offset: 0, length: file.size };
  if (range) headers["Content-Range"] = `bytes ${range.offset}-${range.offset + range.length - 1}/${file.size}`;
  headers["Content-Length"] = String(slice.length);
  if (request.method === "HEAD" || slice.length === 0)
    return new Response(null, { status, headers: withCorsHeaders(headers) });
  const object = await service.bucket.get(objectKey(file.handle), range ? { range } : {});
  if (!object) throw new Error(`the bytes of ready file ${file.handle} are missing from the bucket`);
  return new Response(object.body, { status, headers: withCorsHeaders(headers) });
}

/**
 * `If-Range` (RFC 9110 §13.1.5): the Range applies only if the validator is our ETag, compared strongly. A date
 * never matches (no Last-Modified is sent, and a file is immutable once ready anyway): the whole file comes back.
 */
function ifRangeHolds(header: string | null, etag: string): boolean {
  return header === null || header.trim() === etag;
}

const INT_RANGE = /^(\d+)-(\d*)$/;
const SUFFIX_RANGE = /^-(\d+)$/;

/**
 * A `Range` header for a file of `size` bytes (RFC 9110 §14.1.2, §14.2): the one range to send; null to send the
 * whole file (no header, another unit, invalid syntax — a first position after the last one is invalid — or more
 * than one range, which a server may answer whole); "unsatisfiable" when the range starts at or past the end, or is
 * a suffix of zero bytes.
 */
function parseRange(header: string | null, size: number): { offset: number; length: number } | null | "unsatisfiable" {
  if (header === null) return null;
  const match = /^bytes=(.*)$/is.exec(header.trim());
  if (!match) return null;
  // A list may carry empty elements, which recipients skip (RFC 9110 §5.6.1).
  const specs = match[1]!
    .split(",")
    .map((spec) => spec.trim())
    .filter((spec) => spec !== "");
  if (specs.length === 0) return null;
  const ranges: Array<{ suffix: bigint } | { first: bigint; last: bigint | null }> = [];
  for (const spec of specs) {
    const suffix = SUFFIX_RANGE.exec(spec);
    const int = INT_RANGE.exec(spec);
    if (suffix) ranges.push({ suffix: BigInt(suffix[1]!) });
    else if (int) {
      const first = BigInt(int[1]!);
      const last = int[2] === "" ? null : BigInt(int[2]!);
      if (last !== null && last < first) return null;
      ranges.push({ first, last });
    } else return null;
  }
  if (ranges.length > 1) return null;
  const range = ranges[0]!;
  const length = BigInt(size);
  if ("suffix" in range) {
    if (range.suffix === 0n) return "unsatisfiable";
    // An empty file has no byte positions to name in a Content-Range: it is sent whole (empty).
    if (size === 0) return null;
    const take = range.suffix < length ? range.suffix : length;
    return { offset: size - Number(take), length: Number(take) };
  }
  if (range.first >= length) return "unsatisfiable";
  const end = range.last === null || range.last >= length ? length - 1n : range.last;
  return { offset: Number(range.first), length: Number(end - range.first + 1n) };
}
