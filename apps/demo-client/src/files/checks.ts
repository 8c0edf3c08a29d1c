// What the server says about an upload (`file_status`, asked by the page's agent): after the last byte, that it
// verified the whole file's sha256; after a reload, how far an interrupted upload got. The upload flows themselves
// are files/upload.ts; the records, files/records.ts.
import type { JsonObject } from "../../shared/mcp.ts";
import type { AgentTool } from "../agent-calls.ts";
import { formatBytes, rpcProblem, toolProblem } from "./format.ts";
import { UploadRecords } from "./records.ts";

export class UploadChecks extends UploadRecords {
  /** `tool`: the session's MCP requests through its agent (file_status). */
  constructor(protected readonly tool: AgentTool) {
    super();
  }

  /** After the last byte: the server checked the whole file's sha256 (`file_status` says ready, with the digest). */
  protected async verify(id: string): Promise<void> {
    const record = this.find(id);
    if (!record?.handle) return;
    this.patch(id, { state: "verifying", confirmed: record.size, sent: record.size });
    this.persist();
    try {
      const result = await this.tool("fileStatus", [record.serverUrl, record.handle]);
      if (result.isError === true) {
        this.fail(id, toolProblem(result, "Upload the file again."), false);
        return;
      }
      const view = (result.structuredContent ?? {}) as JsonObject;
      if (view.state !== "ready") {
        const offset = typeof view.offset === "number" ? view.offset : 0;
        this.fail(
          id,
          {
            message: `The upload finished, but the server has ${formatBytes(offset)} of ${formatBytes(record.size)} and says "${String(view.state)}".`,
            next: "Retry the upload: it continues from the server's offset.",
          },
          true,
        );
        this.patch(id, { confirmed: offset, sent: offset });
        return;
      }
      if (view.sha256 !== record.sha256) {
        this.fail(
          id,
          {
            message: `The server verified sha256 ${String(view.sha256)}, but this browser computed ${record.sha256}.`,
            next: "Upload the file again.",
          },
          false,
        );
        return;
      }
      this.patch(id, { state: "ready", problem: undefined });
      this.persist();
    } catch (error) {
      this.fail(id, rpcProblem(error, "file_status"), true);
    }
  }

  /** After a reload: how far an interrupted upload got, from `file_status`. */
  protected async inspect(id: string): Promise<void> {
    const record = this.find(id);
    if (!record) return;
    if (!record.handle) {
      this.fail(
        id,
        {
          message: `The upload of ${record.name} was interrupted before it had a handle.`,
          next: "Upload the file again.",
        },
        false,
      );
      return;
    }
    const interrupted = `The upload of ${record.name} was interrupted: the page was reloaded or closed while it ran.`;
    try {
      const result = await this.tool("fileStatus", [record.serverUrl, record.handle]);
      if (result.isError === true) {
        const problem = toolProblem(result, "Upload the file again (it gets a new handle), or discard this one.");
        this.fail(id, { message: `${interrupted} The server says: ${problem.message}`, next: problem.next }, false);
        return;
      }
      const view = (result.structuredContent ?? {}) as JsonObject;
      if (view.state === "ready") {
        // The last chunk arrived before the reload: nothing to resume.
        this.patch(id, { state: "ready", confirmed: record.size, sent: record.size, problem: undefined });
        this.persist();
        return;
      }
      const offset = typeof view.offset === "number" ? view.offset : record.confirmed;
      const expired = this.expired(record);
      this.patch(id, {
        state: "interrupted",
        confirmed: offset,
        sent: offset,
        resumable: !expired,
        problem: {
          message: `${interrupted} The server has ${formatBytes(offset)} of ${formatBytes(record.size)} (${offset} bytes).`,
          next: expired
            ? `Its upload link expired at ${new Date(record.expiresAt ?? 0).toLocaleTimeString()}: choose ${record.name} again to upload it as a new file, or discard it.`
            : `Choose ${record.name} again to resume from byte ${offset}, or discard it.`,
        },
      });
      this.persist();
    } catch (error) {
      const problem = rpcProblem(error, "file_status");
      this.patch(id, {
        problem: {
          message: `${interrupted} Whether any of it arrived is unknown: ${problem.message}`,
          next: `Choose ${record.name} again to resume once the server answers, or discard it.`,
        },
      });
    }
  }
}
