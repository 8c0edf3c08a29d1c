/**
 * Task ids are bearer handles: 24 random bytes (192 bits) from the platform CSPRNG, base64url-encoded.
 * The one id generator of the runtime.
 */
export function newTaskId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_");
}

const TASK_ID_SHAPE = /^[A-Za-z0-9_-]{32}$/;

/** Cheap shape check so that garbage never reaches a Durable Object. */
export function isTaskIdShape(value: unknown): value is string {
  return typeof value === "string" && TASK_ID_SHAPE.test(value);
}
