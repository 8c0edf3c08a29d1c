import { HmacKey } from "../util/hmac.js";
import type { UrlScope } from "../file-runner/index.js";

export type SignatureCheck = "valid" | "expired" | "invalid";

/**
 * Short-lived capability URLs for `/files/<handle>`: HMAC-SHA256 over (scope, handle, expiry) with a server
 * secret. A host or browser holding one can move bytes without the MCP credentials; it names no principal.
 */
export class UrlSigner {
  #key: HmacKey;

  constructor(secret: string) {
    if (secret.length < 32) {
      throw new Error("the file URL signing secret must be at least 32 characters (generate one with `openssl rand`)");
    }
    this.#key = new HmacKey(secret);
  }

  /** `base` is the file's URL without a query (`https://host/files/<handle>`). */
  async sign(base: string, scope: UrlScope, handle: string, expiresAt: number): Promise<string> {
    const exp = Math.floor(expiresAt / 1000);
    const mac = await this.#key.sign(payload(scope, handle, exp));
    const url = new URL(base);
    url.search = "";
    url.searchParams.set("exp", String(exp));
    url.searchParams.set("sig", mac);
    return url.toString();
  }

  /**
   * Checks the `exp` and `sig` of a request URL for this scope and handle. The signature is checked first, in
   * constant time (crypto.subtle.verify), so a forged expiry cannot pass as merely "expired".
   */
  async verify(url: URL, scope: UrlScope, handle: string, now = Date.now()): Promise<SignatureCheck> {
    const exp = url.searchParams.get("exp");
    const sig = url.searchParams.get("sig");
    if (!exp || !sig || !/^\d{1,12}$/.test(exp)) return "invalid";
    if (!(await this.#key.verify(payload(scope, handle, +exp), sig))) return "invalid";
    return Number(exp) * 1000 <= now ? "expired" : "valid";
  }
}

function payload(scope: UrlScope, handle: string, exp: number): string {
  return `durable-mcp-file/v1\n${scope}\n${handle}\n${exp}`;
}
