import { toBase64Url } from "../util/encoding.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";

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
  /** The salt's HMAC state with both pads hashed once; each key clones it (two compressions for a short name). */
  #hmac: ReturnType<typeof hmac.create> | undefined;
  readonly #encoder = new TextEncoder();

  constructor(private readonly salt: string) {}

  /**
   * Synchronous — WebCrypto's HMAC gives the same bytes only behind a promise, and awaiting it on every new step
   * cost microseconds and microtask hops per step — so the audited @noble/hashes computes it (checked against
   * WebCrypto in test/steps/idempotency-key.test.ts).
   */
  derive(name: string, occurrence: number): string {
    this.#hmac ??= hmac.create(sha256, this.#encoder.encode(this.salt));
    return toBase64Url(
      this.#hmac
        .clone()
        .update(this.#encoder.encode(`${occurrence}:${name}`))
        .digest(),
    );
  }
}
