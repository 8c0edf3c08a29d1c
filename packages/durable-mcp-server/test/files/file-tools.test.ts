import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { rpc } from "../jsonrpc.js";
import { head, MIB, patch, randomBytes, sha256Hex } from "./helpers.js";

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.byteLength; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}

function withoutMessage(envelope: Record<string, unknown>): Record<string, unknown> {
  const { message, ...rest } = envelope;
  return message === undefined ? envelope : rest;
}

async function call(name: string, args: Record<string, unknown>, principal = "alice") {
  const reply = await rpc("tools/call", { name, arguments: args }, { principal });
  const result = reply.body.result;
  if (!result) throw new Error(`tools/call ${name} failed: ${JSON.stringify(reply.body)}`);
  return result as { content: Array<Record<string, any>>; structuredContent: Record<string, any>; isError?: boolean };
}

describe("file tools", () => {
  it("are listed with the conventional names", async () => {
    const tools = (await rpc("tools/list", {})).body.result!.tools as Array<{ name: string }>;
    const names = tools.map((tool) => tool.name);
    for (const name of [
      "file_upload_url",
      "file_download_url",
      "file_upload_open",
      "file_upload_write",
      "file_upload_commit",
      "file_download_read",
      "file_status",
    ]) {
      expect(names).toContain(name);
    }
    // Listed with their schemas, though the tools check their arguments themselves.
    const open = tools.find((tool) => tool.name === "file_upload_open") as unknown as { inputSchema: any };
    expect(open.inputSchema).toMatchObject({
      type: "object",
      properties: { name: { type: "string" }, size: { type: "integer" }, sha256: { pattern: "^[0-9a-fA-F]{64}$" } },
      required: ["name", "size", "sha256"],
    });
  });

  it("move a file in base64 chunks, correcting a wrong offset from partial.cursor", async () => {
    const bytes = randomBytes(2 * MIB + 5);
    const sha256 = await sha256Hex(bytes);
    const opened = await call("file_upload_open", {
      name: "notes.csv",
      size: bytes.byteLength,
      sha256,
      mimeType: "text/csv",
    });
    const handle = opened.structuredContent.handle as string;
    expect(handle).toMatch(/^file_[A-Za-z0-9_-]{32}$/);
    expect(opened.structuredContent).toMatchObject({ state: "uploading", offset: 0, chunkBytes: MIB });

    await call("file_upload_write", { handle, offset: 0, data: base64(bytes.subarray(0, MIB)) });
    const wrong = await call("file_upload_write", { handle, offset: 5, data: base64(bytes.subarray(5, 10)) });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent.error).toMatchObject({
      code: "offset_mismatch",
      retryable: true,
      param: "offset",
      partial: { cursor: MIB },
    });
    const early = await call("file_upload_commit", { handle });
    expect(early.structuredContent.error).toMatchObject({ code: "upload_incomplete", partial: { cursor: MIB } });

    const cursor = wrong.structuredContent.error.partial.cursor as number;
    await call("file_upload_write", { handle, offset: cursor, data: base64(bytes.subarray(cursor, 2 * MIB)) });
    const last = await call("file_upload_write", { handle, offset: 2 * MIB, data: base64(bytes.subarray(2 * MIB)) });
    expect(last.structuredContent).toMatchObject({ state: "ready", sha256, offset: bytes.byteLength });

    const committed = await call("file_upload_commit", { handle });
    expect(committed.isError).toBeUndefined();
    const link = committed.content.find((block) => block.type === "resource_link")!;
    expect(link).toMatchObject({ name: "notes.csv", mimeType: "text/csv", size: bytes.byteLength });
    expect(link.uri).toBe(`http://fixture.test/files/${handle}`);
    expect(link._meta["durable-mcp-server/file"]).toEqual({ handle, sha256 });

    const pieces: Uint8Array[] = [];
    for (let offset = 0, eof = false; !eof;) {
      const read = await call("file_download_read", { handle, offset, length: MIB });
      pieces.push(fromBase64(read.structuredContent.data));
      offset = read.structuredContent.nextOffset;
      eof = read.structuredContent.eof;
    }
    const joined = new Uint8Array(await new Blob(pieces).arrayBuffer());
    expect(await sha256Hex(joined)).toBe(sha256);
    const past = await call("file_download_read", { handle, offset: bytes.byteLength + 1, length: 10 });
    expect(past.structuredContent.error).toMatchObject({
      code: "offset_out_of_range",
      partial: { cursor: bytes.byteLength },
    });
  });

  it("hand out signed URLs: tus upload, then a ranged download", async () => {
    const bytes = randomBytes(300_000);
    const sha256 = await sha256Hex(bytes);
    const issued = await call("file_upload_url", {
      name: "photo.jpg",
      size: bytes.byteLength,
      sha256,
      mimeType: "image/jpeg",
    });
    const { handle, uploadUrl, expiresAt } = issued.structuredContent;
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    expect((await head(uploadUrl)).headers.get("Upload-Offset")).toBe("0");

    const notReady = await call("file_download_url", { handle });
    expect(notReady.structuredContent.error).toMatchObject({ code: "file_not_ready", retryable: true });

    expect((await patch(uploadUrl, 0, bytes)).status).toBe(204);
    const download = await call("file_download_url", { handle });
    expect(download.structuredContent).toMatchObject({
      handle,
      size: bytes.byteLength,
      sha256,
      mimeType: "image/jpeg",
    });
    // No MCP credentials: the URL alone authorises the download.
    const response = await SELF.fetch(download.structuredContent.url, { headers: { Range: "bytes=100-199" } });
    expect(response.status).toBe(206);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes.subarray(100, 200));
  });

  it("re-issue the upload URL of an unfinished upload by handle, for its owner only", async () => {
    const bytes = randomBytes(5000);
    const sha256 = await sha256Hex(bytes);
    const first = await call("file_upload_url", { name: "a.bin", size: bytes.byteLength, sha256 });
    const { handle, uploadUrl } = first.structuredContent;
    expect((await patch(uploadUrl, 0, bytes.subarray(0, 3000))).status).toBe(204);

    const again = await call("file_upload_url", { handle });
    expect(again.structuredContent).toMatchObject({ handle, offset: 3000 });
    expect((await patch(again.structuredContent.uploadUrl, 3000, bytes.subarray(3000))).status).toBe(204);
    const done = await call("file_upload_url", { handle });
    expect(done.structuredContent.error).toMatchObject({ code: "already_final", param: "handle" });

    expect((await call("file_upload_url", { handle }, "mallory")).structuredContent.error.code).toBe("unknown_file");
    const incomplete = await call("file_upload_url", { name: "x" });
    expect(incomplete.structuredContent.error).toMatchObject({ code: "invalid_param" });
  });

  it("answer bad input and foreign handles with the envelope", async () => {
    const sha256 = await sha256Hex(new Uint8Array(4));
    const opened = await call("file_upload_open", { name: "x", size: 4, sha256 });
    const handle = opened.structuredContent.handle as string;

    const foreign = await call("file_status", { handle }, "mallory");
    const unknown = await call("file_status", { handle: "file_nope" });
    // Alike but for the handle the message quotes back.
    expect(foreign.structuredContent.error.code).toBe("unknown_file");
    expect(withoutMessage(foreign.structuredContent.error)).toEqual(withoutMessage(unknown.structuredContent.error));
    expect(
      (await call("file_upload_write", { handle, offset: 0, data: "AAAA" }, "mallory")).structuredContent.error.code,
    ).toBe("unknown_file");

    const badData = await call("file_upload_write", { handle, offset: 0, data: "not base64!" });
    expect(badData.structuredContent.error).toMatchObject({ code: "invalid_param", param: "data" });
    const tooLong = await call("file_upload_write", { handle, offset: 0, data: base64(new Uint8Array(5)) });
    expect(tooLong.structuredContent.error).toMatchObject({ code: "too_long", partial: { cursor: 0 } });
    const huge = await call("file_upload_open", { name: "big", size: 65 * MIB, sha256 });
    expect(huge.structuredContent.error).toMatchObject({ code: "file_too_large", retryable: false, param: "size" });

    const wrongDigest = await call("file_upload_write", {
      handle,
      offset: 0,
      data: base64(new Uint8Array([1, 2, 3, 4])),
    });
    expect(wrongDigest.structuredContent.error).toMatchObject({ code: "digest_mismatch", partial: { cursor: 0 } });
    const retried = await call("file_upload_write", { handle, offset: 0, data: base64(new Uint8Array(4)) });
    expect(retried.structuredContent).toMatchObject({ state: "ready", sha256 });

    const schema = await rpc("tools/call", {
      name: "file_upload_open",
      arguments: { name: "x", size: -1, sha256: "nope" },
    });
    // Arguments that fail the schema: the same envelope as every tool's, naming the first failing argument.
    expect(schema.body.error).toBeUndefined();
    expect(schema.body.result).toMatchObject({
      isError: true,
      structuredContent: {
        error: {
          code: "invalid_arguments",
          retryable: false,
          param: "size",
          recoveryHint: expect.stringContaining('Fix the argument "size"'),
          details: {
            tool: "file_upload_open",
            issues: [
              { path: "size", message: expect.any(String), code: "too_small" },
              { path: "sha256", message: expect.any(String), code: "invalid_format" },
            ],
          },
        },
      },
    });
    expect(schema.body.result!.content[0].text).toMatch(/^Error invalid_arguments: Input validation error: size: /);
    // A missing argument and one past its maximum: the same envelope, naming it.
    const missing = await call("file_download_read", { handle, offset: 0 });
    expect(missing.structuredContent.error).toMatchObject({
      code: "invalid_arguments",
      retryable: false,
      param: "length",
    });
    const tooMuch = await call("file_download_read", { handle, offset: 0, length: 2 * MIB });
    expect(tooMuch.structuredContent.error).toMatchObject({ code: "invalid_arguments", param: "length" });
  });
});
