import type { FileAccess } from "./file-runner.js";
import type { FileService } from "./file-service.js";
import { serveDownload } from "./download.js";
import { plain } from "./http-common.js";
import { checkTusVersion, tusCreate, tusDelete, tusHead, tusOptions, tusPatch } from "./tus.js";

/** Resolves the caller of an unsigned request: a principal, or the Response (a 401) to answer with. */
export type FileCaller = (request: Request) => Promise<{ principal: string } | Response>;

/**
 * The HTTP surface under `settings.path`: `POST <path>` creates a tus upload (MCP credentials), and
 * `<path>/<handle>` takes tus HEAD/PATCH/DELETE and download GET/HEAD, authorised by a signed URL (`exp`, `sig`)
 * or by the owner's credentials. An expired URL is 401 and a tampered one 403, both decided before any lookup;
 * unknown, foreign and expired handles are the same 404.
 */
export async function routeFileRequest(request: Request, service: FileService, caller: FileCaller): Promise<Response> {
  const url = new URL(request.url);
  const override = request.method === "POST" ? request.headers.get("X-HTTP-Method-Override") : null;
  const method = (override ?? request.method).toUpperCase();
  const rest = url.pathname.slice(service.settings.path.length);
  if (method === "OPTIONS") return tusOptions(service);

  if (rest === "" || rest === "/") {
    if (method !== "POST") return plain(405, "Method not allowed", { Allow: "POST, OPTIONS" });
    const mismatch = checkTusVersion(request);
    if (mismatch) return mismatch;
    const who = await caller(request);
    return who instanceof Response ? who : tusCreate(request, service, who.principal);
  }

  const handle = rest.slice(1);
  const tus = request.headers.has("Tus-Resumable");
  const scope =
    method === "GET" || (method === "HEAD" && !tus)
      ? "download"
      : ["HEAD", "PATCH", "DELETE"].includes(method)
        ? "upload"
        : null;
  if (!scope) return plain(405, "Method not allowed", { Allow: "GET, HEAD, PATCH, DELETE, OPTIONS" });

  let access: FileAccess;
  if (url.searchParams.has("sig") || url.searchParams.has("exp")) {
    const check = await service.signer.verify(url, scope, handle);
    if (check === "expired") return plain(401, "This link has expired; ask for a new one");
    if (check === "invalid") return plain(403, "This link is not valid");
    access = { handle, signed: true };
  } else {
    const who = await caller(request);
    if (who instanceof Response) return who;
    access = { handle, principal: who.principal };
  }

  if (scope === "download") return serveDownload(request, service, access);
  const mismatch = checkTusVersion(request);
  if (mismatch) return mismatch;
  if (method === "HEAD") return tusHead(service, access);
  if (method === "PATCH") return tusPatch(request, service, access);
  return tusDelete(service, access);
}
