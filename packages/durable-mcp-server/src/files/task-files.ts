import { RepairableError } from "../errors/envelope.js";
import { fileHandleForStep } from "../ids.js";
import { fileNotReady, unknownFile } from "./file-envelopes.js";
import { objectKey, partSizeFor } from "../file-runner/index.js";
import type { FileService } from "./file-service.js";
import type { ArtifactBody, FileRef, FileStep, TaskFiles } from "../steps/types.js";
import { toHex } from "../util/encoding.js";

/** What the TaskRunner lends `step.files`: whose files, and the deployment's file service. */
export interface TaskFilesHost {
  taskId: string;
  principal: string;
  service: () => FileService;
}

/** `step.files` over the deployment's file service; `doStep` journals an artifact write as a `step.do`. */
export function createTaskFiles(host: TaskFilesHost, doStep: FileStep): TaskFiles {
  return {
    async open(handle, options = {}) {
      const param = options.param ?? "handle";
      const service = host.service();
      const file = await service.status({ handle, principal: host.principal });
      if (!file) {
        const hint = "Upload the file again (file_upload_url) and start the task with the new handle.";
        throw new RepairableError({ ...unknownFile(handle, hint), param });
      }
      if (file.state !== "ready") {
        throw new RepairableError({ ...fileNotReady(file, "Finish the upload, then start the task again."), param });
      }
      const ref: FileRef = {
        handle,
        name: file.name,
        mimeType: file.mimeType,
        size: file.size,
        sha256: file.sha256!,
        uri: service.fileUrl(handle),
      };
      const stream = async () => {
        const object = await service.bucket.get(objectKey(handle));
        if (!object) throw new Error(`the bytes of ready file ${handle} are missing from the bucket`);
        return object.body;
      };
      const bytes = async () => new Uint8Array(await new Response(await stream()).arrayBuffer());
      return { ...ref, stream, bytes, text: async () => new TextDecoder().decode(await bytes()) };
    },

    write(step, spec) {
      return doStep(step, async () => {
        const service = host.service();
        const handle = await fileHandleForStep(host.taskId, step);
        const mimeType = spec.mimeType ?? "application/octet-stream";
        const body = typeof spec.body === "function" ? await spec.body() : spec.body;
        const { size, sha256 } = await putObject(service.bucket, objectKey(handle), body, mimeType);
        await service.runner(handle).register({
          handle,
          principal: host.principal,
          name: spec.name,
          mimeType,
          size,
          sha256,
          ttlMs: service.settings.ttlMs,
        });
        return { handle, name: spec.name, mimeType, size, sha256, uri: service.fileUrl(handle) };
      });
    },
  };
}

/**
 * Stores `body` under `key` and measures it. A stream of unknown length goes up as a multipart upload in equal
 * parts (R2 needs a known length for a single put of a stream); anything else in one put.
 */
export async function putObject(
  bucket: R2Bucket,
  key: string,
  body: ArtifactBody,
  mimeType: string,
): Promise<{ size: number; sha256: string }> {
  const httpMetadata = { contentType: mimeType };
  if (!(body instanceof ReadableStream)) {
    const bytes = typeof body === "string" ? new TextEncoder().encode(body) : new Uint8Array(body);
    await bucket.put(key, bytes, { httpMetadata });
    return { size: bytes.byteLength, sha256: toHex(await crypto.subtle.digest("SHA-256", bytes)) };
  }
  const partSize = partSizeFor(0);
  const digest = new crypto.DigestStream("SHA-256");
  const hashing = digest.getWriter();
  const reader = body.getReader();
  let upload: R2MultipartUpload | null = null;
  const parts: R2UploadedPart[] = [];
  let buffer: Uint8Array[] = [];
  let buffered = 0;
  let size = 0;
  const flush = async (count: number) => {
    const all = new Uint8Array(buffered);
    let at = 0;
    for (const chunk of buffer) {
      all.set(chunk, at);
      at += chunk.byteLength;
    }
    const part = all.subarray(0, count);
    const rest = all.subarray(count);
    buffer = rest.byteLength > 0 ? [rest] : [];
    buffered = rest.byteLength;
    upload ??= await bucket.createMultipartUpload(key, { httpMetadata });
    parts.push(await upload.uploadPart(parts.length + 1, part));
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      await hashing.write(value);
      buffer.push(value);
      buffered += value.byteLength;
      size += value.byteLength;
      for (let full = Math.floor(buffered / partSize); full > 0; full--) await flush(partSize);
    }
    if (!upload) {
      await bucket.put(key, buffer.length === 1 ? buffer[0]! : new Uint8Array(await new Blob(buffer).arrayBuffer()), {
        httpMetadata,
      });
    } else {
      if (buffered > 0) await flush(buffered);
      await (upload as R2MultipartUpload).complete(parts);
    }
  } catch (error) {
    await (upload as R2MultipartUpload | null)?.abort();
    throw error;
  }
  await hashing.close();
  return { size, sha256: toHex(await digest.digest) };
}
