import { fromBase64Url, toBase64Url } from "../../util/encoding.js";

/** Secrets shorter than this are refused: an HMAC key is only as strong as its entropy. */
export const MIN_SECRET_LENGTH = 32;

/** Where a Signer's key comes from: the deployment's secret, or the key the deployment generated and keeps. */
export type SigningKeySource = "configured" | "generated";

/**
 * HMAC-SHA-256 over short tokens (2025-11-25 session ids, question ids and `tasks/list` cursors). The key comes from
 * a deployment secret; without one, from the key the deployment generated once and keeps durably (session-key.ts),
 * read on first use and then held for the isolate's life, so every instance signs and verifies alike.
 */
export class Signer {
  readonly source: SigningKeySource;
  readonly #load: () => Promise<string>;
  #key: Promise<CryptoKey> | undefined;

  /** `secret`, or else the generated key `generated` reads (retried on the next use if reading it fails). */
  constructor(secret: string | undefined, generated?: () => Promise<string>) {
    if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
      throw new Error(`durableMcp: the session secret must be at least ${MIN_SECRET_LENGTH} characters`);
    }
    if (secret === undefined && generated === undefined) {
      throw new Error("durableMcp: a Signer needs a secret or a generated key");
    }
    this.source = secret === undefined ? "generated" : "configured";
    this.#load = secret === undefined ? generated! : () => Promise.resolve(secret);
  }

  #cryptoKey(): Promise<CryptoKey> {
    if (!this.#key) {
      const key = this.#load().then((text) =>
        crypto.subtle.importKey("raw", new TextEncoder().encode(text), { name: "HMAC", hash: "SHA-256" }, false, [
          "sign",
          "verify",
        ]),
      );
      // A failed read (a transient Durable Object error, say) is not kept: the next request reads again.
      key.catch(() => {
        if (this.#key === key) this.#key = undefined;
      });
      this.#key = key;
    }
    return this.#key;
  }

  async sign(text: string): Promise<string> {
    const mac = await crypto.subtle.sign("HMAC", await this.#cryptoKey(), new TextEncoder().encode(text));
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
    return crypto.subtle.verify("HMAC", await this.#cryptoKey(), bytes, new TextEncoder().encode(text));
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
