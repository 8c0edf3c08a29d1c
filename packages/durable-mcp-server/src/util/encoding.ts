/// <reference lib="esnext.typedarrays" />
/**
 * Bytes as base64, base64url and hex: the one place the library converts them. The conversions are the runtime's
 * own (`Uint8Array.prototype.toBase64`/`toHex`, `Uint8Array.fromBase64`), which workerd has (V8) and the tests run
 * on; TypeScript declares them only in its `esnext.typedarrays` lib, hence the reference above instead of a
 * hand-written loop over `btoa`/`atob`. The library runs only in Workers; nothing on the Node side imports it.
 */

/** Standard base64 with padding (RFC 4648 §4). */
export function toBase64(bytes: Uint8Array): string {
  return bytes.toBase64();
}

/** URL-safe base64 without padding (RFC 4648 §5): ids, handles, signatures. */
export function toBase64Url(bytes: Uint8Array): string {
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

/**
 * Decodes base64 as forgivingly as `atob` does (ASCII whitespace skipped, padding optional, stray bits ignored);
 * throws a SyntaxError on anything else. Callers that need a canonical form check its shape first.
 */
export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.fromBase64(text);
}

/** Decodes URL-safe base64 (padding optional); throws a SyntaxError on anything else. */
export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.fromBase64(text, { alphabet: "base64url" });
}

/** Lowercase hex, two digits a byte (digests, ETags). */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return (bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toHex();
}
