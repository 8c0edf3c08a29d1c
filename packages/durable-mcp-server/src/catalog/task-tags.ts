import { MAX_TAG_KEY_LENGTH, MAX_TAG_VALUE_LENGTH, MAX_TASK_TAGS } from "../limits.js";

export class TaskTagsError extends Error {
  override readonly name = "TaskTagsError";
}

/**
 * The tags as kept: string keys and values within the limits (numbers and booleans as text). Throws TaskTagsError
 * naming the first problem; the caller files the task without tags and logs why.
 */
export function checkTags(tags: unknown): Record<string, string> {
  if (tags === null || typeof tags !== "object" || Array.isArray(tags)) {
    throw new TaskTagsError("tags(input) must return an object of string values");
  }
  const entries = Object.entries(tags as Record<string, unknown>);
  if (entries.length > MAX_TASK_TAGS) throw new TaskTagsError(`at most ${MAX_TASK_TAGS} tags (got ${entries.length})`);
  const kept: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > MAX_TAG_KEY_LENGTH) {
      throw new TaskTagsError(`tag key ${JSON.stringify(key.slice(0, 80))} must be 1–${MAX_TAG_KEY_LENGTH} characters`);
    }
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      throw new TaskTagsError(`tag ${key} must be a string, number or boolean`);
    }
    const text = String(value);
    if (text.length > MAX_TAG_VALUE_LENGTH) {
      throw new TaskTagsError(`tag ${key} is longer than ${MAX_TAG_VALUE_LENGTH} characters`);
    }
    kept[key] = text;
  }
  return kept;
}
