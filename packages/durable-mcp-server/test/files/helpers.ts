// Raw tus 1.0.0 requests against the fixture Worker, as an off-the-shelf client frames them.
import { SELF } from "cloudflare:test";
import { expect } from "vitest";
import type { FileRunnerRpc } from "../../src/file-runner/file-runner-rpc.js";
import { fixtureEnv } from "../helpers.js";

export const MIB = 1024 * 1024;
export const ORIGIN = "http://fixture.test";

export function randomBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let at = 0; at < length; at += 65_536) crypto.getRandomValues(bytes.subarray(at, Math.min(length, at + 65_536)));
  return bytes;
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function sha256Base64(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return btoa(String.fromCharCode(...digest));
}

function metadata(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([key, value]) => `${key} ${btoa(String.fromCharCode(...new TextEncoder().encode(value)))}`)
    .join(",");
}

/** POST creation; returns the response and the upload URL (Location). */
export async function createUpload(
  size: number,
  fields: Record<string, string> = {},
  options: { principal?: string | null; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { "Tus-Resumable": "1.0.0", "Upload-Length": String(size) };
  if (Object.keys(fields).length > 0) headers["Upload-Metadata"] = metadata(fields);
  const principal = options.principal === undefined ? "alice" : options.principal;
  if (principal) headers.Authorization = `Bearer ${principal}`;
  const response = await SELF.fetch(`${ORIGIN}/files`, { method: "POST", headers: { ...headers, ...options.headers } });
  return { response, url: response.headers.get("Location") ?? "" };
}

export async function patch(
  url: string,
  offset: number,
  body: Uint8Array | ReadableStream<Uint8Array>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return SELF.fetch(url, {
    method: "PATCH",
    headers: {
      "Tus-Resumable": "1.0.0",
      "Upload-Offset": String(offset),
      "Content-Type": "application/offset+octet-stream",
      ...headers,
    },
    body,
  });
}

export async function head(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return SELF.fetch(url, { method: "HEAD", headers: { "Tus-Resumable": "1.0.0", ...headers } });
}

export function handleOf(url: string): string {
  return new URL(url).pathname.split("/").at(-1)!;
}

/** Uploads `bytes` in `chunk`-sized PATCHes; returns the last response. */
export async function uploadAll(url: string, bytes: Uint8Array, chunk: number, from = 0): Promise<Response> {
  let last: Response | undefined;
  for (let at = from; at < bytes.byteLength; at += chunk) {
    last = await patch(url, at, bytes.subarray(at, Math.min(bytes.byteLength, at + chunk)));
    if (last.status !== 204) throw new Error(`PATCH at ${at} answered ${last.status}: ${await last.text()}`);
  }
  return last!;
}

/** The FileRunner of `handle`, for the tests that reach the object itself. */
export function fileRunnerOf(handle: string): DurableObjectStub & FileRunnerRpc {
  const namespace = fixtureEnv.FILE_RUNNER;
  return namespace.get(namespace.idFromName(handle)) as unknown as DurableObjectStub & FileRunnerRpc;
}

/** The file `handle` downloaded by its owner. */
export function fetchFile(handle: string): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/files/${handle}`, { headers: { Authorization: "Bearer alice" } });
}

/** The upload's offset as HEAD reports it. */
export async function uploadOffset(url: string): Promise<number> {
  return Number((await head(url)).headers.get("Upload-Offset"));
}

/** Downloads `handle` as its owner and checks it is whole: served, its ETag and its bytes' own SHA-256 are `sha256`. */
export async function expectStored(handle: string, sha256: string, size?: number): Promise<void> {
  const download = await fetchFile(handle);
  expect(download.status).toBe(200);
  expect(download.headers.get("ETag")).toBe(`"${sha256}"`);
  const got = new Uint8Array(await download.arrayBuffer());
  if (size !== undefined) expect(got.byteLength).toBe(size);
  expect(await sha256Hex(got)).toBe(sha256);
}
