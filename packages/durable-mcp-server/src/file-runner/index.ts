// The door of the FileRunner Durable Object's folder: everything the Worker side (files/, routing/) may use of it.
// The RPC contract (FileRunnerRpc, with FileAccess, the records it answers with and the write coordinator) is the wall:
// a tus PATCH and `file_upload_write` both stream their bytes into the object's `write`, which keeps the upload's
// native whole-file digest in memory between them (running-digest.ts).
export type { FileAccess, UrlScope } from "./file-access.js";
export { defineFileRunner } from "./file-runner.js";
export {
  objectKey,
  type ChunkChecksum,
  type FileRunnerClass,
  type FileRunnerOptions,
  type FileRunnerRpc,
  type NewFile,
  type WriteOutcome,
} from "./file-runner-rpc.js";
export type { FileRecord } from "./file-store.js";
export { partSizeFor } from "./upload.js";
