import { toBase64Url } from "../util/encoding.js";
import { HmacSha256 } from "../util/sha256.js";

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
  #hmac: HmacSha256 | undefined;
  readonly #encoder = new TextEncoder();

  constructor(private readonly salt: string) {}

  /** Synchronous: the same bytes WebCrypto's HMAC gives (util/sha256.ts), without a promise per step. */
  derive(name: string, occurrence: number): string {
    this.#hmac ??= new HmacSha256(this.#encoder.encode(this.salt));
    return toBase64Url(this.#hmac.sign(this.#encoder.encode(`${occurrence}:${name}`)));
  }
}
