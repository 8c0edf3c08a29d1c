import { fromBase64Url, toBase64Url } from "../../util/encoding.js";

/** Secrets shorter than this are refused: an HMAC key is only as strong as its entropy. */
export const MIN_SECRET_LENGTH = 32;

/**
 * HMAC-SHA-256 over short tokens (2025-11-25 session ids and question ids). The key comes from a deployment secret;
 * without one, from a random key made once per isolate, so tokens then die with the isolate (docs/clients.md).
 */
export class Signer {
  readonly #key: Promise<CryptoKey>;

  constructor(secret: string | undefined) {
    if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
      throw new Error(`durableMcp: the session secret must be at least ${MIN_SECRET_LENGTH} characters`);
    }
    const raw = secret === undefined ? crypto.getRandomValues(new Uint8Array(32)) : new TextEncoder().encode(secret);
    this.#key = crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
  }

  async sign(text: string): Promise<string> {
    const mac = await crypto.subtle.sign("HMAC", await this.#key, new TextEncoder().encode(text));
    return toBase64Url(new Uint8Array(mac));
  }

  /** Constant-time check (crypto.subtle.verify) of a base64url MAC; false for anything malformed. */
  async verify(text: string, mac: string): Promise<boolean> {
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = fromBase64Url(mac);
    } catch {
      return false;
    }
    return crypto.subtle.verify("HMAC", await this.#key, bytes, new TextEncoder().encode(text));
  }
}

/** A short digest of the principal: tokens bind to it without carrying it. */
export async function principalTag(principal: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`principal\u0000${principal}`));
  return toBase64Url(new Uint8Array(digest).slice(0, 16));
}

export function encodeJson(value: unknown): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify(value)));
}

export function decodeJson(text: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(fromBase64Url(text)));
  } catch {
    return undefined;
  }
}
