import type { FileAccess } from "../file-runner/index.js";
import type { FileService } from "./file-service.js";
import { serveDownload } from "./download.js";
import { plain } from "../util/http.js";
import { checkTusVersion, tusCreate, tusDelete, tusHead, tusOptions, tusPatch } from "./tus.js";

/** Resolves the caller of an unsigned request: a principal, or the Response (a 401) to answer with. */
export type FileCaller = (request: Request) => Promise<{ principal: string } | Response>;

/**
 * The HTTP surface under `settings.path`: `POST <path>` creates a tus upload (MCP credentials), and
 * `<path>/<handle>` takes tus HEAD/PATCH/DELETE and download GET/HEAD, authorised by a signed URL (`exp`, `sig`)
 * or by the owner's credentials, which work with or without a signature. A request with an expired URL is 401 and
 * one with a tampered URL 403, unless its credentials are the owner's; unknown, foreign and expired handles are the
 * same 404 (or, behind a refused URL, that URL's 401/403, so a refusal never tells whether the file exists).
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

  const access: FileAccess = { handle };
  /** What a refused signature answers when the credentials do not reach the file either. */
  let refusal: Response | null = null;
  if (url.searchParams.has("sig") || url.searchParams.has("exp")) {
    const check = await service.signer.verify(url, scope, handle);
    if (check === "valid") access.signed = scope;
    else if (check === "expired") refusal = plain(401, "This link has expired; ask for a new one");
    else refusal = plain(403, "This link is not valid");
  }
  // A valid download signature already allows everything a download can do; anything else also asks who the caller
  // is, so that the owner's credentials work on an upload URL that expired or whose upload is complete.
  if (access.signed !== "download") {
    const who = await caller(request);
    if (!(who instanceof Response)) access.principal = who.principal;
    else if (!access.signed) return refusal ?? who;
  }

  const response = await serve(request, method, scope, service, access);
  // The credentials were someone's, but not the owner's: the signature's refusal, as if no lookup had happened.
  return refusal && response.status === 404 ? refusal : response;
}

async function serve(
  request: Request,
  method: string,
  scope: "upload" | "download",
  service: FileService,
  access: FileAccess,
): Promise<Response> {
  if (scope === "download") return serveDownload(request, service, access);
  const mismatch = checkTusVersion(request);
  if (mismatch) return mismatch;
  if (method === "HEAD") return tusHead(service, access);
  if (method === "PATCH") return tusPatch(request, service, access);
  return tusDelete(service, access);
}
