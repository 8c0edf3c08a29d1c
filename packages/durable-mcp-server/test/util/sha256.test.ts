// The synchronous SHA-256 / HMAC-SHA256 (util/sha256.ts) gives WebCrypto's bytes, for every length around the
// block and padding boundaries, keys shorter and longer than a block, and non-ASCII text.
import { describe, expect, it } from "vitest";
import { HmacSha256, sha256 } from "../../src/util/sha256.js";

const encoder = new TextEncoder();
const lengths = [0, 1, 3, 31, 32, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000];
const bytesOf = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) & 0xff);

async function webHmac(key: Uint8Array, message: Uint8Array): Promise<Uint8Array> {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, message));
}

describe("sha256", () => {
  it("matches WebCrypto's digest at every boundary length", async () => {
    for (const n of lengths) {
      const data = bytesOf(n, n);
      expect(sha256(data), `length ${n}`).toEqual(new Uint8Array(await crypto.subtle.digest("SHA-256", data)));
    }
  });

  it("matches WebCrypto's HMAC for short and long keys and messages, and text keys", async () => {
    for (const keyLength of [1, 16, 43, 64, 65, 200]) {
      const key = bytesOf(keyLength, 1);
      const hmac = new HmacSha256(key);
      for (const n of lengths) {
        const message = bytesOf(n, 2);
        expect(hmac.sign(message), `key ${keyLength}, message ${n}`).toEqual(await webHmac(key, message));
      }
    }
    const key = encoder.encode("salt-ü-🙂");
    const message = encoder.encode("2:étape 🙂 ".repeat(9));
    expect(new HmacSha256(key).sign(message)).toEqual(await webHmac(key, message));
  });
});
