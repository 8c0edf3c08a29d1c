// Property-based: whatever reaches the file endpoints — any method, path, tus header, signature or body — the Worker
// answers below 500, and a file someone else owns neither changes nor leaks.
import { SELF } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createUpload, handleOf, head, ORIGIN, patch, randomBytes, sha256Hex } from "./helpers.js";

const handles = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.stringMatching(/^file_[A-Za-z0-9_-]{32}$/),
  fc.constantFrom("..%2F..%2Fetc%2Fpasswd", "file_" + "A".repeat(4000), "%00", "file_", "", "a/b/c", "😀"),
);
const headerArb = fc.record(
  {
    "tus-resumable": fc.constantFrom("1.0.0", "0.2.2", "", "1.0.0, 1.0.0"),
    "upload-offset": fc.oneof(
      fc.constantFrom("0", "-1", "1e9", "99999999999999999999", "abc", ""),
      fc.nat().map(String),
    ),
    "upload-length": fc.oneof(fc.constantFrom("0", "-5", "5368709120", "x"), fc.nat().map(String)),
    "upload-metadata": fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom("filename", "sha256 !!!", "a b c")),
    "upload-checksum": fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom("sha256 AAAA", "md5 xyz", "sha256")),
    "content-type": fc.constantFrom("application/offset+octet-stream", "application/json", "", "text/plain"),
    "x-http-method-override": fc.constantFrom("PATCH", "DELETE", "GET", "BREW"),
    range: fc.constantFrom("bytes=0-0", "bytes=-1", "bytes=5-2", "bytes=0-1,3-4", "items=1-2", "bytes=999999999-"),
    authorization: fc.constantFrom("Bearer mallory", "Bearer ", "Basic x", ""),
  },
  { requiredKeys: [] },
);
const queryArb = fc.oneof(
  fc.constant(""),
  fc
    .record({ exp: fc.oneof(fc.nat().map(String), fc.string({ maxLength: 12 })), sig: fc.string({ maxLength: 60 }) })
    .map(({ exp, sig }) => `?exp=${encodeURIComponent(exp)}&sig=${encodeURIComponent(sig)}`),
);

describe("hostile input on the file endpoints", () => {
  it("never answers 5xx and leaves another principal's upload as it was", async () => {
    const bytes = randomBytes(2000);
    const { url } = await createUpload(bytes.byteLength, { sha256: await sha256Hex(bytes) });
    expect((await patch(url, 0, bytes.subarray(0, 700))).status).toBe(204);
    const victim = handleOf(url);

    await fc.assert(
      fc.asyncProperty(
        fc.oneof(handles, fc.constant(victim)),
        fc.constantFrom("GET", "HEAD", "POST", "PATCH", "DELETE", "OPTIONS", "PUT"),
        headerArb,
        queryArb,
        fc.uint8Array({ maxLength: 3000 }),
        async (handle, method, headers, query, body) => {
          const path = handle === "" ? "/files" : `/files/${handle}`;
          const response = await SELF.fetch(`${ORIGIN}${path}${query}`, {
            method,
            headers,
            body: ["GET", "HEAD"].includes(method) ? undefined : body,
          });
          const text = await response.text();
          expect(response.status, `${method} ${path}${query}: ${text}`).toBeLessThan(500);
        },
      ),
      { numRuns: 400, seed: 20261129 },
    );
    // The victim's upload is exactly where it was, and still completes to the right bytes.
    expect((await head(url)).headers.get("Upload-Offset")).toBe("700");
    expect((await patch(url, 700, bytes.subarray(700))).status).toBe(204);
    const download = await SELF.fetch(`${ORIGIN}/files/${victim}`, { headers: { Authorization: "Bearer alice" } });
    expect(await sha256Hex(new Uint8Array(await download.arrayBuffer()))).toBe(await sha256Hex(bytes));
  });
});
