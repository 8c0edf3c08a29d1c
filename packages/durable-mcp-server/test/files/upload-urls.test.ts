// How long a signed upload URL works and what it may do: as long as its upload lives (a long upload is not cut
// off by a short URL lifetime), only while the file is unfinished, and the owner's credentials alongside it.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { UrlSigner } from "../../src/files/signed-urls.js";
import { newFileHandle } from "../../src/ids.js";
import { fixtureEnv } from "../helpers.js";
import { rpc } from "../jsonrpc.js";
import { createUpload, handleOf, head, ORIGIN, patch, randomBytes, sha256Hex } from "./helpers.js";

const signer = () => new UrlSigner(fixtureEnv.FILE_URL_SECRET);
const MINUTE = 60_000;
const as = (principal: string) => ({ Authorization: `Bearer ${principal}` });

async function call(name: string, args: Record<string, unknown>) {
  const result = (await rpc("tools/call", { name, arguments: args })).body.result;
  if (!result) throw new Error(`tools/call ${name} failed`);
  return result as { structuredContent: Record<string, any>; isError?: boolean };
}

function expiryOf(url: string): number {
  return Number(new URL(url).searchParams.get("exp")) * 1000;
}

function del(url: string, headers: Record<string, string> = {}) {
  return SELF.fetch(url, { method: "DELETE", headers: { "Tus-Resumable": "1.0.0", ...headers } });
}

/** A signed upload URL for `handle` that expired a minute ago. */
function expiredUploadUrl(handle: string) {
  return signer().sign(`${ORIGIN}/files/${handle}`, "upload", handle, Date.now() - MINUTE);
}

describe("upload URLs", () => {
  it("are signed for as long as their upload lives, past the download URLs' 15 minutes", async () => {
    const { response, url } = await createUpload(1000);
    const handle = handleOf(url);
    const uploadExpires = Date.parse(response.headers.get("Upload-Expires")!);
    // Upload-Expires has whole seconds, like the URL's exp.
    expect(expiryOf(url)).toBe(uploadExpires);
    expect(uploadExpires).toBeGreaterThan(Date.now() + 23 * 60 * MINUTE);
    const later = Date.now() + 16 * MINUTE;
    expect(await signer().verify(new URL(url), "upload", handle, later)).toBe("valid");
    expect(await signer().verify(new URL(url), "upload", handle, uploadExpires + 1000)).toBe("expired");

    // The tool hands out the same lifetime: its expiresAt is the upload's, again and again.
    const sha256 = await sha256Hex(new Uint8Array(10));
    const issued = await call("file_upload_url", { name: "a.bin", size: 10, sha256 });
    const { handle: toolHandle, uploadUrl, expiresAt } = issued.structuredContent;
    const status = await call("file_status", { handle: toolHandle });
    expect(expiresAt).toBe(status.structuredContent.expiresAt);
    expect(expiryOf(uploadUrl)).toBe(Math.floor(Date.parse(expiresAt) / 1000) * 1000);
    const again = await call("file_upload_url", { handle: toolHandle });
    expect(again.structuredContent.expiresAt).toBe(expiresAt);

    // Download URLs stay short-lived (files.urlTtl, 15 minutes by default).
    expect((await patch(uploadUrl, 0, new Uint8Array(10))).status).toBe(204);
    const download = await call("file_download_url", { handle: toolHandle });
    const downloadExpires = Date.parse(download.structuredContent.expiresAt);
    expect(downloadExpires).toBeLessThanOrEqual(Date.now() + 15 * MINUTE);
    expect(downloadExpires).toBeGreaterThan(Date.now() + 14 * MINUTE);
  });

  it("take the owner's credentials with an expired signature, and refuse anyone else as before", async () => {
    const bytes = randomBytes(3000);
    const { url } = await createUpload(bytes.byteLength, { sha256: await sha256Hex(bytes) });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes.subarray(0, 1000))).status).toBe(204);
    const expired = await expiredUploadUrl(handle);

    // Without credentials, or with someone else's, the expired URL is 401: the same as for a handle that does
    // not exist, so the refusal still says nothing about the file.
    expect((await head(expired)).status).toBe(401);
    expect((await head(expired, as("mallory"))).status).toBe(401);
    const ghost = newFileHandle();
    expect((await head(await expiredUploadUrl(ghost), as("alice"))).status).toBe(401);
    expect((await patch(expired, 1000, bytes.subarray(1000, 2000), as("mallory"))).status).toBe(401);

    // With the owner's, it works: tus-js-client keeps its URL and sends the owner's headers on every request.
    const status = await head(expired, as("alice"));
    expect(status.status).toBe(200);
    expect(status.headers.get("Upload-Offset")).toBe("1000");
    expect((await patch(expired, 1000, bytes.subarray(1000, 2000), as("alice"))).status).toBe(204);
    // A signature that is not valid at all: 403 for others, the owner's credentials still decide for the owner.
    const tampered = new URL(url);
    tampered.searchParams.set("sig", "A".repeat(43));
    expect((await head(tampered.href, as("mallory"))).status).toBe(403);
    const last = await patch(tampered.href, 2000, bytes.subarray(2000), as("alice"));
    expect(last.status).toBe(204);
    expect(last.headers.get("Upload-Offset")).toBe("3000");
    const download = await SELF.fetch(`${ORIGIN}/files/${handle}`, { headers: as("alice") });
    expect(await sha256Hex(new Uint8Array(await download.arrayBuffer()))).toBe(await sha256Hex(bytes));
  });

  it("can do nothing once the file is complete; the owner's credentials still can", async () => {
    const bytes = randomBytes(2000);
    const { url } = await createUpload(bytes.byteLength, { sha256: await sha256Hex(bytes) });
    const handle = handleOf(url);
    expect((await patch(url, 0, bytes)).status).toBe(204);

    // The URL handed to whoever uploaded: no HEAD, no PATCH, no DELETE of the finished file.
    const after = [await head(url), await patch(url, 2000, new Uint8Array(0)), await del(url)];
    expect(after.map((response) => response.status)).toEqual([404, 404, 404]);
    const unknown = await head(`${ORIGIN}/files/${newFileHandle()}`, as("alice"));
    expect(await after[0]!.text()).toBe(await unknown.text());
    const file = `${ORIGIN}/files/${handle}`;
    const kept = await SELF.fetch(file, { headers: as("alice") });
    expect(kept.status).toBe(200);
    expect(await sha256Hex(new Uint8Array(await kept.arrayBuffer()))).toBe(await sha256Hex(bytes));

    // Someone else's credentials on the URL change nothing; the owner's do what the owner may.
    expect((await del(url, as("mallory"))).status).toBe(404);
    const owner = await head(url, as("alice"));
    expect(owner.status).toBe(200);
    expect(owner.headers.get("Upload-Offset")).toBe("2000");
    expect((await del(url, as("alice"))).status).toBe(204);
    const gone = await SELF.fetch(file, { headers: as("alice") });
    expect(gone.status).toBe(404);
    await gone.text();
    expect(await fixtureEnv.FILES.head(`files/${handle}`)).toBeNull();
  });

  it("an empty file is complete at creation: its upload URL does nothing from the start", async () => {
    const { response, url } = await createUpload(0, { sha256: await sha256Hex(new Uint8Array(0)) });
    expect(response.status).toBe(201);
    expect((await del(url)).status).toBe(404);
    expect((await head(url, as("alice"))).status).toBe(200);
  });
});
