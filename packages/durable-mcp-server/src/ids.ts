import { toBase64Url } from "./util/encoding.js";

/**
 * Task ids are bearer handles: 24 random bytes (192 bits) from the platform CSPRNG, base64url-encoded.
 * The one id generator of the runtime.
 */
export function newTaskId(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(24)));
}

/**
 * The task id of a call that carries an idempotency key: derived from the caller, the tool and the key, so that
 * repeating the call reaches the same TaskRunner, and two principals' keys never meet. Same shape as newTaskId.
 */
export async function taskIdForKey(principal: string, tool: string, key: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${principal}\u0000${tool}\u0000${key}`),
  );
  return toBase64Url(new Uint8Array(digest).slice(0, 24));
}

/** File handles: `file_` + 24 random bytes (192 bits), base64url. Bearer handles, like task ids. */
export function newFileHandle(): string {
  return `file_${newTaskId()}`;
}

/**
 * The handle of a file a task step writes: derived from the task and the step, so that a retried or replayed step
 * writes the same handle (and overwrites its own bytes) instead of leaking a new one. Unguessable without the
 * task id, which is itself a 192-bit secret.
 */
export async function fileHandleForStep(taskId: string, step: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`file\u0000${taskId}\u0000${step}`));
  return `file_${toBase64Url(new Uint8Array(digest).slice(0, 24))}`;
}

const TASK_ID_SHAPE = /^[A-Za-z0-9_-]{32}$/;
const FILE_HANDLE_SHAPE = /^file_[A-Za-z0-9_-]{32}$/;

/** Cheap shape check so that garbage never reaches a Durable Object. */
export function isTaskIdShape(value: unknown): value is string {
  return typeof value === "string" && TASK_ID_SHAPE.test(value);
}

export function isFileHandleShape(value: unknown): value is string {
  return typeof value === "string" && FILE_HANDLE_SHAPE.test(value);
}
