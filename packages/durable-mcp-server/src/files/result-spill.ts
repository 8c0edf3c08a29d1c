import type { ResultSpill } from "../steps/step-results.js";
import type { FilesSettings } from "./file-service.js";
import { toHex } from "../util/encoding.js";

function prefix(taskId: string): string {
  return `results/${taskId}/`;
}

/**
 * Step results too large for the journal live in R2 under `results/<taskId>/<sha256 of the step name>`: one key
 * per step, so a step that runs again after a crash overwrites its own object, and purging the task removes them.
 */
export function resultSpill(bucket: () => R2Bucket, taskId: string): ResultSpill {
  return {
    async put(name, text) {
      const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(name));
      const key = `${prefix(taskId)}${toHex(digest)}`;
      await bucket().put(key, text, { httpMetadata: { contentType: "application/json" } });
      return key;
    },
    async get(key) {
      const object = await bucket().get(key);
      if (!object) throw new Error(`spilled step result ${key} is missing from the bucket`);
      return object.text();
    },
  };
}

/** Removes a purged task's spilled results. */
export async function deleteSpilledResults(env: unknown, settings: FilesSettings, taskId: string): Promise<void> {
  const bucket = (env as Record<string, unknown>)[settings.bucketBinding] as R2Bucket | undefined;
  if (!bucket) return;
  for (let cursor: string | undefined; ;) {
    const listed = await bucket.list({ prefix: prefix(taskId), cursor });
    if (listed.objects.length > 0) await bucket.delete(listed.objects.map((object) => object.key));
    if (!listed.truncated) return;
    cursor = listed.cursor;
  }
}
