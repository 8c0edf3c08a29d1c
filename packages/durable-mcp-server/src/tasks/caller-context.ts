import type { FileService } from "../files/file-service.js";
import type { RunnerClient } from "./runner-client.js";

/**
 * Who is calling, and how this request reaches what that caller owns: the one caller context the router builds
 * per request (after `authenticate`) and every request-scoped part reads: the server's task tools and `tasks/*`
 * handlers, the router's fast path and listen, the facade tools. Tasks and files are bound to `principal`; a
 * foreign principal sees exactly what an unknown id sees.
 */
export interface CallerContext {
  /** `Caller.principal`, as `authenticate` returned it ("anonymous" without one). */
  principal: string;
  /** The TaskRunner Durable Objects of this deployment. */
  runners: RunnerClient;
  /** The deployment's files, when `durableMcp` was given `files` (built on first use). */
  files?: () => FileService;
}
