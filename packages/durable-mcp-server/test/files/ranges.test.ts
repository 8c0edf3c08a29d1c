// Range requests on downloads, as RFC 9110 §14 has them: a malformed Range (a first position after the last one
// included) is ignored and the whole file sent; one satisfiable range is 206; one that starts at or past the end is
// 416 with `Content-Range: bytes */<size>`; several ranges get the whole file; If-Range guards a resumed download.
import { SELF } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createUpload, handleOf, ORIGIN, patch, randomBytes, sha256Hex } from "./helpers.js";

const SIZE = 1000;
const alice = { Authorization: "Bearer alice" };
let file = "";
let bytes: Uint8Array;
let etag = "";

beforeAll(async () => {
  bytes = randomBytes(SIZE);
  const { url } = await createUpload(SIZE, { sha256: await sha256Hex(bytes) });
  expect((await patch(url, 0, bytes)).status).toBe(204);
  file = `${ORIGIN}/files/${handleOf(url)}`;
  etag = `"${await sha256Hex(bytes)}"`;
});

async function get(headers: Record<string, string>, method = "GET") {
  const response = await SELF.fetch(file, { method, headers: { ...alice, ...headers } });
  return {
    status: response.status,
    contentRange: response.headers.get("Content-Range"),
    contentLength: response.headers.get("Content-Length"),
    body: new Uint8Array(await response.arrayBuffer()),
  };
}

describe("Range", () => {
  it.each([
    ["bytes=5-3", "first after last"],
    ["bytes=99999999999999999999-99999999999999999998", "first after last, past 2^53"],
    ["bytes=0-1,3-4", "several ranges"],
    ["bytes=0-1, 990-", "several ranges, one a suffix"],
    ["items=1-2", "another unit"],
    ["bytes=", "no range"],
    ["bytes=,", "only empty elements"],
    ["bytes=-", "neither position"],
    ["bytes=1-2-3", "not a range"],
    ["bytes=a-b", "not numbers"],
    ["bytes=-1-2", "a suffix with a last position"],
    ["bytes 0-1", "no ="],
  ])("%s (%s): ignored, the whole file with 200", async (range) => {
    const answer = await get({ Range: range });
    expect(answer.status).toBe(200);
    expect(answer.contentRange).toBeNull();
    expect(answer.contentLength).toBe(String(SIZE));
    expect(answer.body).toEqual(bytes);
  });

  it.each([
    ["bytes=10-19", 10, 19],
    ["BYTES=10-19", 10, 19],
    ["bytes=0-0", 0, 0],
    ["bytes=990-", 990, 999],
    ["bytes=990-5000", 990, 999],
    ["bytes=999-999", 999, 999],
    ["bytes=-5", 995, 999],
    ["bytes=-5000", 0, 999],
    ["bytes=10-19,", 10, 19],
    [" bytes=10-19 ", 10, 19],
  ])("%s: 206 for bytes %i–%i", async (range, first, last) => {
    const answer = await get({ Range: range });
    expect(answer.status).toBe(206);
    expect(answer.contentRange).toBe(`bytes ${first}-${last}/${SIZE}`);
    expect(answer.contentLength).toBe(String(last - first + 1));
    expect(answer.body).toEqual(bytes.subarray(first, last + 1));
  });

  it.each(["bytes=1000-", "bytes=1000-1000", "bytes=5000-6000", "bytes=-0"])(
    "%s: 416 with the size in Content-Range",
    async (range) => {
      const answer = await get({ Range: range });
      expect(answer.status).toBe(416);
      expect(answer.contentRange).toBe(`bytes */${SIZE}`);
    },
  );

  it("answers HEAD with a range's headers and no body", async () => {
    const answer = await get({ Range: "bytes=10-19" }, "HEAD");
    expect(answer.status).toBe(206);
    expect(answer.contentRange).toBe(`bytes 10-19/${SIZE}`);
    expect(answer.contentLength).toBe("10");
    expect(answer.body.byteLength).toBe(0);
  });

  it("applies the range only when If-Range is the current ETag, compared strongly", async () => {
    const same = await get({ Range: "bytes=10-19", "If-Range": etag });
    expect([same.status, same.contentRange]).toEqual([206, `bytes 10-19/${SIZE}`]);
    for (const validator of [`"${"0".repeat(64)}"`, `W/${etag}`, "Wed, 21 Oct 2015 07:28:00 GMT"]) {
      const other = await get({ Range: "bytes=10-19", "If-Range": validator });
      expect([other.status, other.contentRange], validator).toEqual([200, null]);
      expect(other.body).toEqual(bytes);
    }
    // Without a Range, If-Range changes nothing.
    expect((await get({ "If-Range": `"${"0".repeat(64)}"` })).status).toBe(200);
  });

  it("sends an empty file whole for a suffix range, and 416 for any other", async () => {
    const { url } = await createUpload(0, { sha256: await sha256Hex(new Uint8Array(0)) });
    const empty = `${ORIGIN}/files/${handleOf(url)}`;
    const suffix = await SELF.fetch(empty, { headers: { ...alice, Range: "bytes=-5" } });
    expect([suffix.status, suffix.headers.get("Content-Length")]).toEqual([200, "0"]);
    const from = await SELF.fetch(empty, { headers: { ...alice, Range: "bytes=0-" } });
    expect([from.status, from.headers.get("Content-Range")]).toEqual([416, "bytes */0"]);
    await from.text();
  });
});
