import type { ErrorEnvelope } from "../errors/envelope.js";
import type { FileRecord } from "../file-runner/index.js";

/**
 * The envelopes a file that cannot be used gets, wherever it is asked for (the file tools, `step.files`). Unknown,
 * expired and foreign handles are the same envelope on purpose.
 */
export function unknownFile(handle: string, recoveryHint?: string): ErrorEnvelope {
  return {
    code: "unknown_file",
    message: `No file ${JSON.stringify(handle)} is visible to you.`,
    retryable: false,
    recoveryHint:
      recoveryHint ??
      "Check the handle. Files are visible only to whoever created them and are deleted when they expire.",
    param: "handle",
  };
}

export function fileNotReady(file: FileRecord, recoveryHint: string): ErrorEnvelope {
  return {
    code: "file_not_ready",
    message: `${file.handle} is still uploading (${file.offset} of ${file.size} bytes).`,
    retryable: true,
    recoveryHint,
    param: "handle",
    partial: { cursor: file.offset },
  };
}
