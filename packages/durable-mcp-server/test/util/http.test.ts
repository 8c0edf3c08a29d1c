// The CORS headers and plain responses of src/util/http.ts, alone and on the wire: the exact header set every file
// endpoint answer carries, so that moving or merging these helpers cannot drop, add or reorder one.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { corsHeaders, plain, withCors, withCorsHeaders } from "../../src/util/http.js";
import { createUpload, handleOf, ORIGIN, patch, randomBytes, sha256Hex } from "../files/helpers.js";

/** Written out here, not imported: a change to the module must show up as a failure. */
const CORS: Record<string, string> = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET, HEAD, POST, PATCH, DELETE, OPTIONS",
  "access-control-allow-headers":
    "Authorization, Content-Type, Upload-Length, Upload-Offset, Upload-Metadata, Upload-Checksum, " +
    "Upload-Defer-Length, Upload-Concat, Tus-Resumable, X-HTTP-Method-Override, X-Requested-With, X-Request-ID, " +
    "Range, If-Range, If-None-Match",
  "access-control-expose-headers":
    "Upload-Offset, Upload-Length, Upload-Expires, Location, Tus-Version, Tus-Resumable, Tus-Max-Size, " +
    "Tus-Extension, Tus-Checksum-Algorithm, ETag, Content-Range, Content-Length, Accept-Ranges",
  "access-control-max-age": "86400",
};

function headersOf(response: Response | Headers): Record<string, string> {
  return Object.fromEntries((response instanceof Headers ? response : response.headers).entries());
}

describe("util/http", () => {
  it("corsHeaders is the file endpoints' CORS set", () => {
    expect(headersOf(new Headers(corsHeaders()))).toEqual(CORS);
  });

  it("plain: a text line with CORS and a text type; no body (and no type) for 204, 304 or no message", async () => {
    const notFound = plain(404, "Not found", { Allow: "GET" });
    expect(notFound.status).toBe(404);
    expect(await notFound.text()).toBe("Not found\n");
    expect(headersOf(notFound)).toEqual({ ...CORS, "content-type": "text/plain; charset=utf-8", allow: "GET" });
    for (const empty of [plain(204, "ignored"), plain(304, "ignored", { ETag: '"x"' }), plain(200, undefined)]) {
      expect(empty.body).toBeNull();
      expect(headersOf(empty)["content-type"]).toBeUndefined();
    }
    expect(headersOf(plain(304, undefined, { ETag: '"x"' }))).toEqual({ ...CORS, etag: '"x"' });
  });

  it("withCorsHeaders: the given headers over the CORS set, a same-named one replacing it", () => {
    const merged = withCorsHeaders({ ETag: '"e"', "Access-Control-Max-Age": "5" });
    expect(headersOf(merged)).toEqual({ ...CORS, etag: '"e"', "access-control-max-age": "5" });
  });

  it("withCors: the CORS set over a response's own headers, status and body kept", async () => {
    const original = new Response("unauthorized", {
      status: 401,
      headers: { "WWW-Authenticate": "Bearer", "Access-Control-Allow-Origin": "https://elsewhere.example" },
    });
    const copy = withCors(original);
    expect(copy.status).toBe(401);
    expect(await copy.text()).toBe("unauthorized");
    expect(headersOf(copy)).toEqual({
      ...CORS,
      "content-type": "text/plain;charset=UTF-8",
      "www-authenticate": "Bearer",
    });
  });
});

describe("CORS on the wire", () => {
  it("an authenticate refusal (401) gets the CORS set", async () => {
    const { response } = await createUpload(10, {}, { principal: null });
    expect(response.status).toBe(401);
    expect(await response.text()).toBe("unauthorized");
    expect(headersOf(response)).toEqual({
      ...CORS,
      "content-type": "text/plain;charset=UTF-8",
      "www-authenticate": "Bearer",
    });
  });

  it("a Host refusal (403) of the file endpoints gets the CORS set", async () => {
    const response = await SELF.fetch(`${ORIGIN}/open/files`, { method: "POST" });
    expect(response.status).toBe(403);
    expect(headersOf(response)).toEqual({ ...CORS, "content-type": "text/plain;charset=UTF-8" });
  });

  it("a download and a ranged download carry the file's headers over the CORS set", async () => {
    const bytes = randomBytes(100);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { filename: "a b.txt", filetype: "text/plain", sha256 });
    expect((await patch(url, 0, bytes)).status).toBe(204);
    const file = {
      ...CORS,
      "content-type": "text/plain",
      etag: `"${sha256}"`,
      "accept-ranges": "bytes",
      "cache-control": "private, max-age=0",
      "content-disposition": "attachment; filename*=UTF-8''a%20b.txt",
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
    };
    const download = `${ORIGIN}/files/${handleOf(url)}`;
    const whole = await SELF.fetch(download, { headers: { Authorization: "Bearer alice" } });
    expect(whole.status).toBe(200);
    expect(headersOf(whole)).toEqual({ ...file, "content-length": "100" });
    await whole.arrayBuffer();
    const part = await SELF.fetch(download, { headers: { Authorization: "Bearer alice", Range: "bytes=10-19" } });
    expect(part.status).toBe(206);
    expect(headersOf(part)).toEqual({ ...file, "content-length": "10", "content-range": "bytes 10-19/100" });
    await part.arrayBuffer();
    const head = await SELF.fetch(download, { method: "HEAD", headers: { Authorization: "Bearer alice" } });
    expect(headersOf(head)).toEqual({ ...file, "content-length": "100" });
  });
});
