import { fromBase64Url, toBase64Url } from "./encoding.js";

const encoder = new TextEncoder();

/**
 * HMAC-SHA256 over text with a server secret, signatures as base64url: what the signed URLs of files and of webhooks
 * are built on. Each caller signs its own domain-prefixed message, so a signature of one kind never passes as another.
 */
export class HmacKey {
  #key: Promise<CryptoKey>;

  constructor(secret: string) {
    this.#key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
  }

  async sign(message: string): Promise<string> {
    return toBase64Url(new Uint8Array(await crypto.subtle.sign("HMAC", await this.#key, encoder.encode(message))));
  }

  /** Constant-time (crypto.subtle.verify); false for anything that is not a well-formed SHA-256 signature. */
  async verify(message: string, signature: string): Promise<boolean> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(signature)) return false;
    return crypto.subtle.verify("HMAC", await this.#key, fromBase64Url(signature), encoder.encode(message));
  }
}
