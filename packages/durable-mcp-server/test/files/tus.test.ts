import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fixtureEnv } from "../helpers.js";
import {
  createUpload,
  handleOf,
  head,
  MIB,
  ORIGIN,
  patch,
  randomBytes,
  sha256Base64,
  sha256Hex,
  uploadAll,
} from "./helpers.js";

async function sha1(chunk: Uint8Array): Promise<string> {
  return btoa(String.fromCharCode(...new Uint8Array(await crypto.subtle.digest("SHA-1", chunk))));
}

/** A body of unknown length (sent chunked, without Content-Length), in these pieces. */
function streamOf(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream({
    pull(controller) {
      if (next < pieces.length) controller.enqueue(pieces[next++]!.slice());
      else controller.close();
    },
  });
}

async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

describe("tus 1.0.0 upload", () => {
  it("advertises the protocol, its extensions and sha1 and sha256 checksums on OPTIONS", async () => {
    const response = await SELF.fetch(`${ORIGIN}/files`, { method: "OPTIONS" });
    expect(response.status).toBe(204);
    expect(response.headers.get("Tus-Version")).toBe("1.0.0");
    expect(response.headers.get("Tus-Extension")).toBe("creation,checksum,termination,expiration");
    expect(response.headers.get("Tus-Checksum-Algorithm")).toBe("sha1,sha256");
    expect(response.headers.get("Tus-Max-Size")).toBe(String(64 * MIB));
    expect(response.headers.get("Access-Control-Allow-Headers")).toContain("Upload-Offset");
  });

  it("uploads across part boundaries in uneven chunks, verifies the digest and serves it back", async () => {
    const bytes = randomBytes(12 * MIB + 12_345);
    const sha256 = await sha256Hex(bytes);
    const { response, url } = await createUpload(bytes.byteLength, {
      filename: "data.bin",
      filetype: "application/x-test",
      sha256,
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("Upload-Expires")).toMatch(/GMT$/);
    expect(url).toMatch(/^http:\/\/fixture\.test\/files\/file_[A-Za-z0-9_-]{32}\?exp=\d+&sig=/);

    // Chunks that straddle the 5 MiB parts, one tiny one, and one with a checksum.
    const cuts = [0, 3 * MIB, 3 * MIB + 1, 9 * MIB + 17, bytes.byteLength];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const chunk = bytes.subarray(cuts[i]!, cuts[i + 1]!);
      const headers: Record<string, string> =
        i === 2 ? { "Upload-Checksum": `sha256 ${await sha256Base64(chunk)}` } : {};
      const reply = await patch(url, cuts[i]!, chunk, headers);
      expect(reply.status).toBe(204);
      expect(reply.headers.get("Upload-Offset")).toBe(String(cuts[i + 1]));
    }
    // The owner asks (the upload URL itself does nothing once the file is complete: upload-urls.test.ts).
    const status = await head(url, { Authorization: "Bearer alice" });
    expect(status.headers.get("Upload-Offset")).toBe(String(bytes.byteLength));
    expect(status.headers.get("Upload-Length")).toBe(String(bytes.byteLength));
    expect(status.headers.get("Cache-Control")).toBe("no-store");

    // Downloads need their own signed URL or the owner's credentials.
    const auth = { Authorization: "Bearer alice" };
    const file = `${ORIGIN}/files/${handleOf(url)}`;
    const whole = await SELF.fetch(file, { headers: auth });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("Content-Type")).toBe("application/x-test");
    expect(whole.headers.get("Content-Length")).toBe(String(bytes.byteLength));
    expect(whole.headers.get("ETag")).toBe(`"${sha256}"`);
    // Served as a download that can never run as a page of this origin, whatever type the uploader declared.
    expect(whole.headers.get("Content-Disposition")).toBe("attachment; filename*=UTF-8''data.bin");
    expect(whole.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(whole.headers.get("Content-Security-Policy")).toBe("default-src 'none'; sandbox");
    expect(await sha256Hex(await bytesOf(whole))).toBe(sha256);

    const ranged = await SELF.fetch(file, { headers: { ...auth, Range: `bytes=${5 * MIB - 10}-${5 * MIB + 9}` } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("Content-Range")).toBe(`bytes ${5 * MIB - 10}-${5 * MIB + 9}/${bytes.byteLength}`);
    expect(await bytesOf(ranged)).toEqual(bytes.subarray(5 * MIB - 10, 5 * MIB + 10));
    const suffix = await SELF.fetch(file, { headers: { ...auth, Range: "bytes=-5" } });
    expect(await bytesOf(suffix)).toEqual(bytes.subarray(bytes.byteLength - 5));
    const beyond = await SELF.fetch(file, { headers: { ...auth, Range: `bytes=${bytes.byteLength}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get("Content-Range")).toBe(`bytes */${bytes.byteLength}`);
    await beyond.text();
    const cached = await SELF.fetch(file, { headers: { ...auth, "If-None-Match": `"${sha256}"` } });
    expect(cached.status).toBe(304);
  });

  it("answers 409 to a wrong offset and changes nothing", async () => {
    const bytes = randomBytes(1000);
    const { url } = await createUpload(bytes.byteLength);
    expect((await patch(url, 0, bytes.subarray(0, 400))).status).toBe(204);
    const wrong = await patch(url, 100, bytes.subarray(100, 500));
    expect(wrong.status).toBe(409);
    expect(wrong.headers.get("Upload-Offset")).toBe("400");
    expect((await head(url)).headers.get("Upload-Offset")).toBe("400");
    expect((await patch(url, 400, bytes.subarray(400))).status).toBe(204);
    const done = await SELF.fetch(`${ORIGIN}/files/${handleOf(url)}`, { headers: { Authorization: "Bearer alice" } });
    expect(await bytesOf(done)).toEqual(bytes);
  });

  it("discards a chunk whose sha256 does not match (460) and rejects other algorithms (400)", async () => {
    const bytes = randomBytes(6 * MIB);
    const { url } = await createUpload(bytes.byteLength, { sha256: await sha256Hex(bytes) });
    const first = bytes.subarray(0, MIB);
    expect((await patch(url, 0, first)).status).toBe(204);
    // A chunk that crosses into a new part, sent with the checksum of other bytes.
    const chunk = bytes.subarray(MIB, 6 * MIB);
    const bad = await patch(url, MIB, chunk, { "Upload-Checksum": `sha256 ${await sha256Base64(first)}` });
    expect(bad.status).toBe(460);
    expect((await head(url)).headers.get("Upload-Offset")).toBe(String(MIB));
    const md5 = await patch(url, MIB, chunk, { "Upload-Checksum": "md5 1B2M2Y8AsgTpgAmY7PhCfg==" });
    expect(md5.status).toBe(400);
    const good = await patch(url, MIB, chunk, { "Upload-Checksum": `sha256 ${await sha256Base64(chunk)}` });
    expect(good.status).toBe(204);
    expect(good.headers.get("Upload-Offset")).toBe(String(6 * MIB));
    const done = await SELF.fetch(`${ORIGIN}/files/${handleOf(url)}`, { headers: { Authorization: "Bearer alice" } });
    expect(await sha256Hex(await bytesOf(done))).toBe(await sha256Hex(bytes));
  });

  it("checks sha1 chunk checksums too, which the tus checksum extension requires", async () => {
    const bytes = randomBytes(3000);
    const { url } = await createUpload(bytes.byteLength, { sha256: await sha256Hex(bytes) });
    const first = bytes.subarray(0, 1000);
    expect((await patch(url, 0, first, { "Upload-Checksum": `sha1 ${await sha1(first)}` })).status).toBe(204);
    const chunk = bytes.subarray(1000);
    const bad = await patch(url, 1000, chunk, { "Upload-Checksum": `sha1 ${await sha1(first)}` });
    expect(bad.status).toBe(460);
    expect(bad.headers.get("Upload-Offset")).toBe("1000");
    // The algorithm's name is case-insensitive; a digest of the wrong size for it is malformed.
    const wrongSize = await patch(url, 1000, chunk, { "Upload-Checksum": `sha1 ${await sha256Base64(chunk)}` });
    expect(wrongSize.status).toBe(400);
    for (const other of ["crc32 AAAAAA==", "sha512 AAAA", "md5 1B2M2Y8AsgTpgAmY7PhCfg=="]) {
      expect((await patch(url, 1000, chunk, { "Upload-Checksum": other })).status, other).toBe(400);
    }
    expect((await head(url)).headers.get("Upload-Offset")).toBe("1000");
    const good = await patch(url, 1000, chunk, { "Upload-Checksum": `SHA1 ${await sha1(chunk)}` });
    expect(good.status).toBe(204);
    expect(good.headers.get("Upload-Offset")).toBe("3000");
    const done = await SELF.fetch(`${ORIGIN}/files/${handleOf(url)}`, { headers: { Authorization: "Bearer alice" } });
    expect(await sha256Hex(await bytesOf(done))).toBe(await sha256Hex(bytes));
  });

  it("refuses a chunked PATCH (no Content-Length) that runs past Upload-Length whole, keeping none of it", async () => {
    // 10 MiB: two whole 5 MiB parts, so the body that overflows has already filled every part of the file.
    const bytes = randomBytes(10 * MIB);
    const sha256 = await sha256Hex(bytes);
    const { url } = await createUpload(bytes.byteLength, { sha256 });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes.subarray(0, 3 * MIB))).status).toBe(204);
    for (const excess of [1, MIB]) {
      const over = await patch(url, 3 * MIB, streamOf([bytes.subarray(3 * MIB), randomBytes(excess)]));
      expect(over.status).toBe(413);
      expect(over.headers.get("Upload-Offset")).toBe(String(3 * MIB));
      expect((await head(url)).headers.get("Upload-Offset")).toBe(String(3 * MIB));
      const early = await SELF.fetch(`${ORIGIN}/files/${handle}`, { headers: { Authorization: "Bearer alice" } });
      expect(early.status).toBe(409);
      await early.text();
    }
    // The same with a chunk checksum (of the bytes that would fit): refused whole too.
    const checksum = { "Upload-Checksum": `sha256 ${await sha256Base64(bytes.subarray(3 * MIB))}` };
    const overChecked = await patch(url, 3 * MIB, streamOf([bytes.subarray(3 * MIB), randomBytes(1)]), checksum);
    expect([overChecked.status, overChecked.headers.get("Upload-Offset")]).toEqual([413, String(3 * MIB)]);
    // The upload goes on from where it was, and the file is the right bytes.
    const rest = await patch(url, 3 * MIB, streamOf([bytes.subarray(3 * MIB, 7 * MIB), bytes.subarray(7 * MIB)]));
    expect(rest.status).toBe(204);
    expect(rest.headers.get("Upload-Offset")).toBe(String(bytes.byteLength));
    const done = await SELF.fetch(`${ORIGIN}/files/${handle}`, { headers: { Authorization: "Bearer alice" } });
    expect(done.headers.get("ETag")).toBe(`"${sha256}"`);
    expect(await sha256Hex(await bytesOf(done))).toBe(sha256);
  });

  it("resets the upload when the whole file does not match the declared sha256", async () => {
    const bytes = randomBytes(2000);
    const { url } = await createUpload(bytes.byteLength, { sha256: "0".repeat(64) });
    const reply = await patch(url, 0, bytes);
    expect(reply.status).toBe(460);
    expect(await reply.text()).toContain(await sha256Hex(bytes));
    expect((await head(url)).headers.get("Upload-Offset")).toBe("0");
    const download = await SELF.fetch(`${ORIGIN}/files/${handleOf(url)}`, {
      headers: { Authorization: "Bearer alice" },
    });
    expect(download.status).toBe(409);
    await download.text();
    expect(await fixtureEnv.FILES.head(`files/${handleOf(url)}`)).toBeNull();
  });

  it("refuses bad requests with the tus status codes", async () => {
    expect((await createUpload(64 * MIB + 1)).response.status).toBe(413);
    const noLength = await SELF.fetch(`${ORIGIN}/files`, {
      method: "POST",
      headers: { "Tus-Resumable": "1.0.0", Authorization: "Bearer alice" },
    });
    expect(noLength.status).toBe(400);
    const deferred = await createUpload(10, {}, { headers: { "Upload-Defer-Length": "1" } });
    expect(deferred.response.status).toBe(400);
    expect((await createUpload(10, {}, { headers: { "Upload-Metadata": "name !!!" } })).response.status).toBe(400);
    expect((await createUpload(10, { sha256: "xyz" })).response.status).toBe(400);
    expect((await createUpload(10, {}, { headers: { "Tus-Resumable": "0.2.2" } })).response.status).toBe(412);
    expect((await createUpload(10, {}, { principal: null })).response.status).toBe(401);

    const { url } = await createUpload(10);
    expect((await patch(url, 0, new Uint8Array(4), { "Content-Type": "application/json" })).status).toBe(415);
    expect((await patch(url, 0, new Uint8Array(4), { "Upload-Offset": "-1" })).status).toBe(400);
    expect((await patch(url, 0, new Uint8Array(11))).status).toBe(413);
    expect((await head(url)).headers.get("Upload-Offset")).toBe("0");
    const get = await SELF.fetch(`${ORIGIN}/files/nope/deeper`, { headers: { Authorization: "Bearer alice" } });
    expect(get.status).toBe(404);
    await get.text();
  });

  it("terminates an upload on DELETE and removes its parts", async () => {
    const bytes = randomBytes(6 * MIB);
    const { url } = await createUpload(bytes.byteLength);
    await patch(url, 0, bytes.subarray(0, 5 * MIB + 1));
    const key = `files/${handleOf(url)}`;
    const gone = await SELF.fetch(url, { method: "DELETE", headers: { "Tus-Resumable": "1.0.0" } });
    expect(gone.status).toBe(204);
    expect((await head(url)).status).toBe(404);
    expect(await fixtureEnv.FILES.head(key)).toBeNull();
    // A second DELETE finds nothing.
    expect((await SELF.fetch(url, { method: "DELETE", headers: { "Tus-Resumable": "1.0.0" } })).status).toBe(404);
  });

  it("serialises concurrent PATCHes at one offset: one lands, the other gets 409, no corruption", async () => {
    const bytes = randomBytes(7 * MIB);
    const { url } = await createUpload(bytes.byteLength, { sha256: await sha256Hex(bytes) });
    const replies = await Promise.all([
      patch(url, 0, bytes.subarray(0, 6 * MIB)),
      patch(url, 0, bytes.subarray(0, 6 * MIB)),
    ]);
    expect(replies.map((r) => r.status).toSorted()).toEqual([204, 409]);
    await uploadAll(url, bytes, MIB, 6 * MIB);
    const done = await SELF.fetch(`${ORIGIN}/files/${handleOf(url)}`, { headers: { Authorization: "Bearer alice" } });
    expect(await sha256Hex(await bytesOf(done))).toBe(await sha256Hex(bytes));
  });

  it("supports X-HTTP-Method-Override for clients that cannot send PATCH", async () => {
    const bytes = randomBytes(100);
    const { url } = await createUpload(bytes.byteLength);
    const reply = await SELF.fetch(url, {
      method: "POST",
      headers: {
        "X-HTTP-Method-Override": "PATCH",
        "Tus-Resumable": "1.0.0",
        "Upload-Offset": "0",
        "Content-Type": "application/offset+octet-stream",
      },
      body: bytes,
    });
    expect(reply.status).toBe(204);
    expect(reply.headers.get("Upload-Offset")).toBe("100");
  });

  it("creates an empty file ready at once", async () => {
    const { response, url } = await createUpload(0, { sha256: await sha256Hex(new Uint8Array(0)) });
    expect(response.status).toBe(201);
    expect((await head(url, { Authorization: "Bearer alice" })).headers.get("Upload-Offset")).toBe("0");
    const download = await SELF.fetch(`${ORIGIN}/files/${handleOf(url)}`, {
      headers: { Authorization: "Bearer alice" },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get("Content-Length")).toBe("0");
  });
});
