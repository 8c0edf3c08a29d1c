import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "../limits.js";
import { IDEMPOTENCY_KEY_META } from "./meta-keys.js";

/**
 * A call's idempotency key, checked: its `_meta` IDEMPOTENCY_KEY_META when that is a string, else the
 * `Idempotency-Key` header; undefined when it carries neither (the 2025-11-25 wire passes no `_meta`). A key that is
 * empty or longer than MAX_IDEMPOTENCY_KEY_LENGTH is -32602.
 */
export function idempotencyKeyOf(
  meta: Record<string, unknown> | undefined,
  headers: Headers | undefined,
): string | undefined {
  const fromMeta = meta?.[IDEMPOTENCY_KEY_META];
  const key = typeof fromMeta === "string" ? fromMeta : (headers?.get("idempotency-key") ?? undefined);
  if (key === undefined) return undefined;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `An idempotency key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long`,
    );
  }
  return key;
}
