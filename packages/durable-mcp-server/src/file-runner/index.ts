// The door of the FileRunner Durable Object's folder: everything the Worker side (files/, routing/) may use of it.
// The RPC contract (FileRunnerRpc, with FileAccess, the records it answers with and the write coordinator) is the wall;
// `receiveChunk` is the one piece of code both sides run: the object for `file_upload_write`, the Worker for a tus PATCH,
// so the bytes go straight from where they arrive to R2.
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
export { partSizeFor, receiveChunk } from "./upload.js";
