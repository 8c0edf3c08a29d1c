// How the page's file flows put things into words (src/files/format.ts): sizes, sha256 digests, and the problems
// (a message and a next step) of a failed tool result, a failed tus upload and a failed request of the agent.
// Plain functions, no browser: the tus errors are tus-js-client's own DetailedError with the answer it would carry.
import * as tus from "tus-js-client";
import { describe, expect, it } from "vitest";
import { McpError } from "../../shared/mcp.ts";
import { formatBytes, rpcProblem, sha256Hex, toolProblem, tusProblem } from "../../src/files/format.ts";

/** The error tus-js-client reports when the server answered `status` with `body`. */
function refused(status: number, body: string): tus.DetailedError {
  const response: tus.HttpResponse = {
    getStatus: () => status,
    getHeader: () => undefined,
    getBody: () => body,
    getUnderlyingObject: () => undefined,
  };
  return Object.assign(new tus.DetailedError("tus: unexpected response while uploading chunk"), {
    originalResponse: response,
  });
}

describe("sizes and digests", () => {
  it("writes sizes in B, KiB, MiB and GiB at their boundaries", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1023)).toBe("1023 B");
    expect(formatBytes(1024)).toBe("1.0 KiB");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(1024 * 1024 - 1)).toBe("1024.0 KiB");
    expect(formatBytes(1024 * 1024)).toBe("1.0 MiB");
    expect(formatBytes(5.25 * 1024 * 1024)).toBe("5.3 MiB");
    expect(formatBytes(1024 ** 3)).toBe("1.00 GiB");
    expect(formatBytes(1.5 * 1024 ** 3)).toBe("1.50 GiB");
  });

  it("hashes bytes and Blobs to the hex sha256 (FIPS 180-2 vectors)", async () => {
    const abc = new TextEncoder().encode("abc");
    const expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    expect(await sha256Hex(abc.buffer)).toBe(expected);
    expect(await sha256Hex(new Blob([abc]))).toBe(expected);
    expect(await sha256Hex(new Blob([]))).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});

describe("a failed tool result", () => {
  it("takes the error envelope's message, code and recovery hint before the fallback next step", () => {
    const result = {
      isError: true,
      content: [{ type: "text", text: "ignored: the envelope says it better" }],
      structuredContent: {
        error: { code: "unknown_bucket", message: "No bucket named logz", recoveryHint: "Pick a listed bucket." },
      },
    };
    expect(toolProblem(result, "Then try again.")).toEqual({
      message: "No bucket named logz (unknown_bucket)",
      next: "Pick a listed bucket. Then try again.",
    });
  });

  it("falls back to the result's text, then to the result itself", () => {
    expect(toolProblem({ isError: true, content: [{ type: "text", text: "disk full" }] }, "Retry.")).toEqual({
      message: "disk full",
      next: "Retry.",
    });
    expect(toolProblem({ isError: true }, "")).toEqual({ message: '{"isError":true}', next: "" });
  });
});

describe("a failed tus upload", () => {
  it("without an answer from the server: could not reach it, resumable, the request details cut off", () => {
    const error = new Error(
      "tus: failed to upload chunk at offset 0, caused by TypeError: Failed to fetch, originated from request (method: PATCH)",
    );
    expect(tusProblem(error)).toEqual({
      message:
        "The upload could not reach the server: tus: failed to upload chunk at offset 0, caused by TypeError: Failed to fetch.",
      next: "Check the connection and retry: the upload continues from the last byte the server confirmed.",
      resumable: true,
    });
  });

  it("reads the server's status: an expired link (401) and a gone handle (403, 404) are not resumable", () => {
    expect(tusProblem(refused(401, "link expired"))).toEqual({
      message: "The server refused the upload (HTTP 401): link expired.",
      next: "The upload link expired: upload the file again (it gets a new handle).",
      resumable: false,
    });
    for (const status of [403, 404]) {
      const problem = tusProblem(refused(status, ""));
      expect(problem.message).toBe(`The server refused the upload (HTTP ${status}): no message.`);
      expect(problem.resumable).toBe(false);
      expect(problem.next).toMatch(/^The server no longer takes bytes for this handle/);
    }
  });

  it("a sha256 mismatch (460) and anything else are resumable", () => {
    const mismatch = tusProblem(refused(460, " checksum mismatch \n"));
    expect(mismatch.message).toBe("The server refused the upload (HTTP 460): checksum mismatch.");
    expect(mismatch.resumable).toBe(true);
    expect(mismatch.next).toMatch(/do not match the file's sha256/);
    expect(tusProblem(refused(503, "busy"))).toEqual({
      message: "The server refused the upload (HTTP 503): busy.",
      next: "Retry the upload; it continues from the last byte the server confirmed.",
      resumable: true,
    });
  });
});

describe("a failed request of the agent", () => {
  it("an unreachable agent or server keeps its own message; any other failure is named with what was asked", () => {
    expect(rpcProblem(new McpError("unreachable", "The page's agent did not answer (closed)."), "file_status")).toEqual(
      { message: "The page's agent did not answer (closed).", next: "Check that the server is running, then retry." },
    );
    expect(rpcProblem(new McpError("rpc", "Invalid params"), "file_upload_url")).toEqual({
      message: "file_upload_url failed: Invalid params",
      next: "Retry; if it keeps failing, check the server's log.",
    });
    expect(rpcProblem("socket closed", "file_status").message).toBe("file_status failed: socket closed");
  });
});
