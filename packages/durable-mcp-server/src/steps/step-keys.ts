import { toBase64Url } from "../util/encoding.js";

/**
 * A task's step-key salt: 32 random bytes (256 bits) from the platform CSPRNG, base64url. Created with the task and
 * kept in its record; it never leaves the TaskRunner.
 */
export function newStepKeySalt(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Derives the idempotency key a `step.do` body receives: base64url(HMAC-SHA256(salt, `${occurrence}:${name}`)).
 * Unlike the task id (a bearer handle where no `authenticate` is configured) it is safe to hand to third-party
 * APIs: it reveals nothing about the task, and keys of different tasks never collide. `occurrence` counts the uses
 * of `name` in the run, from 1. The engine journals the key at a step's first attempt and reuses it from there.
 */
export class StepKeys {
  #key: Promise<CryptoKey> | undefined;

  constructor(private readonly salt: string) {}

  async derive(name: string, occurrence: number): Promise<string> {
    this.#key ??= crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(this.salt),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const mac = await crypto.subtle.sign("HMAC", await this.#key, new TextEncoder().encode(`${occurrence}:${name}`));
    return toBase64Url(new Uint8Array(mac));
  }
}
