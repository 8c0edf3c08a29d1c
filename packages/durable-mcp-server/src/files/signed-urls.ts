import { fromBase64Url, toBase64Url } from "../util/encoding.js";

/** What a signed URL lets its bearer do: move bytes into an upload, or read a finished file. */
export type UrlScope = "upload" | "download";

export type SignatureCheck = "valid" | "expired" | "invalid";

const encoder = new TextEncoder();

/**
 * Short-lived capability URLs for `/files/<handle>`: HMAC-SHA256 over (scope, handle, expiry) with a server
 * secret. A host or browser holding one can move bytes without the MCP credentials; it names no principal.
 */
export class UrlSigner {
  #key: Promise<CryptoKey>;

  constructor(secret: string) {
    if (secret.length < 32) {
      throw new Error("the file URL signing secret must be at least 32 characters (generate one with `openssl rand`)");
    }
    this.#key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
  }

  /** `base` is the file's URL without a query (`https://host/files/<handle>`). */
  async sign(base: string, scope: UrlScope, handle: string, expiresAt: number): Promise<string> {
    const exp = Math.floor(expiresAt / 1000);
    const mac = await crypto.subtle.sign("HMAC", await this.#key, encoder.encode(payload(scope, handle, exp)));
    const url = new URL(base);
    url.search = "";
    url.searchParams.set("exp", String(exp));
    url.searchParams.set("sig", toBase64Url(new Uint8Array(mac)));
    return url.toString();
  }

  /**
   * Checks the `exp` and `sig` of a request URL for this scope and handle. The signature is checked first, in
   * constant time (crypto.subtle.verify), so a forged expiry cannot pass as merely "expired".
   */
  async verify(url: URL, scope: UrlScope, handle: string, now = Date.now()): Promise<SignatureCheck> {
    const exp = url.searchParams.get("exp");
    const sig = url.searchParams.get("sig");
    if (!exp || !sig || !/^\d{1,12}$/.test(exp) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return "invalid";
    const mac = fromBase64Url(sig);
    const ok = await crypto.subtle.verify("HMAC", await this.#key, mac, encoder.encode(payload(scope, handle, +exp)));
    if (!ok) return "invalid";
    return Number(exp) * 1000 <= now ? "expired" : "valid";
  }
}

function payload(scope: UrlScope, handle: string, exp: number): string {
  return `durable-mcp-file/v1\n${scope}\n${handle}\n${exp}`;
}
