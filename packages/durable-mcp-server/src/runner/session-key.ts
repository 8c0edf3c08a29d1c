import { toBase64Url } from "../util/encoding.js";

/**
 * The TaskRunner object that keeps the deployment's generated session key. Not a task id (those are 32 base64url
 * characters), so no task request can reach it, and the pool never prepares it.
 */
export const SESSION_KEY_OBJECT = "durable-mcp:session-key";
const STORAGE_KEY = "sessionKey";

/** What the key-keeping object answers: its key, made on the first call and kept in its storage from then on. */
export interface SessionKeyRpc {
  sessionKey(): Promise<string>;
}

/**
 * The key, generated at the first call (32 random bytes, base64url) and kept. Synchronous storage, so two
 * concurrent first calls cannot both generate one.
 */
export function keptSessionKey(kv: SyncKvStorage): string {
  const kept = kv.get<string>(STORAGE_KEY);
  if (typeof kept === "string") return kept;
  const key = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  kv.put(STORAGE_KEY, key);
  return key;
}

/** Reads the deployment's generated session key from its TaskRunner namespace (one call; callers cache it). */
export function readSessionKey(namespace: DurableObjectNamespace): Promise<string> {
  const stub = namespace.get(namespace.idFromName(SESSION_KEY_OBJECT)) as unknown as SessionKeyRpc;
  return stub.sessionKey();
}
