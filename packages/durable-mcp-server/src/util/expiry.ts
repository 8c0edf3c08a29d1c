/**
 * When something with a lifetime expires: a task (its optional TTL from creation), a file upload, a signed URL.
 * One function so that the alarm, the purge and the handle text a client reads can never disagree on the instant.
 */

/** `createdAt + ttlMs` (epoch ms); null when there is no TTL (kept until deleted). */
export function expiryOf(createdAt: number, ttlMs: number): number;
export function expiryOf(createdAt: number, ttlMs: number | null): number | null;
export function expiryOf(createdAt: number, ttlMs: number | null): number | null {
  return ttlMs === null ? null : createdAt + ttlMs;
}
