// The idempotency key a step body receives is HMAC-SHA256(salt, `${occurrence}:${name}`), base64url — computed
// synchronously with @noble/hashes; WebCrypto, the platform's own HMAC, must give the same bytes.
import { describe, expect, it } from "vitest";
import { newStepKeySalt, StepKeys } from "../../src/steps/step-keys.js";
import { toBase64Url } from "../../src/util/encoding.js";

async function webCryptoKey(salt: string, message: string): Promise<string> {
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", encoder.encode(salt), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return toBase64Url(new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message))));
}

describe("StepKeys", () => {
  it("derives the same key as WebCrypto's HMAC-SHA256, for short, block-sized, long and non-ASCII names", async () => {
    const salt = newStepKeySalt();
    const keys = new StepKeys(salt);
    const names = ["a", "fetch page", "x".repeat(53), "y".repeat(55), "z".repeat(64), "w".repeat(256), "ページ 🚀"];
    for (const name of names) {
      for (const occurrence of [1, 2, 17]) {
        expect(keys.derive(name, occurrence)).toBe(await webCryptoKey(salt, `${occurrence}:${name}`));
      }
    }
  });

  it("gives different keys to different salts, names and occurrences", () => {
    const a = new StepKeys(newStepKeySalt());
    const b = new StepKeys(newStepKeySalt());
    expect(new Set([a.derive("n", 1), a.derive("n", 2), a.derive("m", 1), b.derive("n", 1)]).size).toBe(4);
  });
});
