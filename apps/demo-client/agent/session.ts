/// <reference lib="esnext.typedarrays" />
// The gate in front of the page's agent: what the Worker checks before a request reaches a TaskWatcher.
//
// - POST /agents/session opens (or finds) this browser's session: the Worker sets an HttpOnly, SameSite=Strict
//   cookie (Secure on https) holding a random session secret it signed, and answers the agent's name, which is
//   derived from the secret (a hash of it): the name alone, or a URL with it, gives nothing.
// - /agents/task-watcher/<name> (WebSocket upgrade or HTTP) is served only for a request from the page's own origin
//   (else 403), with a well-formed name (else 400) and the cookie whose secret derives that name (else 403).
// - Each client (its IP address; an IPv6 address by its /64) opens at most SESSIONS_PER_CLIENT sessions, hence
//   agents, per SESSION_WINDOW_MS (else 429): counted by the WatcherClients Durable Object of that client.
import { DurableObject } from "cloudflare:workers";
import {
  SESSION_PATH,
  SESSION_WINDOW_MS,
  SESSIONS_PER_CLIENT,
  WATCHER_AGENT,
  WATCHER_NAME,
  type SessionInfo,
} from "../shared/watcher-state.ts";
import { listedServers } from "./servers.ts";

export const SESSION_COOKIE = "watcher_session";
/** The cookie lives as long as a browser keeps it (Chrome caps Max-Age at 400 days). */
const COOKIE_MAX_AGE_S = 180 * 24 * 3600;
const encoder = new TextEncoder();

interface GateEnv {
  WATCHER_SESSION_SECRET?: string;
  WATCHER_SESSIONS_PER_CLIENT?: string;
  WATCHER_CLIENTS?: DurableObjectNamespace<WatcherClients>;
}

function refuse(status: number, error: string, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ error, message }, { status, headers });
}

/**
 * Whether the request comes from a page of this origin. A browser always sends Origin on a WebSocket upgrade and on
 * a POST, so those must carry ours; a GET may come without it (a browser sends none on a same-origin GET, and a
 * script or curl none at all), but a browser's Sec-Fetch-Site must then still say same-origin (or a typed URL).
 */
function fromOwnOrigin(request: Request, requireOrigin: boolean): boolean {
  const origin = request.headers.get("origin");
  if (origin === null ? requireOrigin : origin !== new URL(request.url).origin) return false;
  const site = request.headers.get("sec-fetch-site");
  return site === null || site === "same-origin" || site === "none";
}

// The Worker's runtime converts bytes itself (Uint8Array toBase64/fromBase64/toHex, declared by the lib referenced
// at the top); the page, which runs in browsers that may lack them, keeps its own hex.
function base64url(bytes: ArrayBuffer | Uint8Array): string {
  return new Uint8Array(bytes).toBase64({ alphabet: "base64url", omitPadding: true });
}

/** The bytes of unpadded base64url; undefined for text that is not (a length of 4n + 1 would make the decoder throw). */
function fromBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(text) || text.length % 4 === 1) return undefined;
  return Uint8Array.fromBase64(text, { alphabet: "base64url" });
}

async function sessionKey(env: GateEnv): Promise<CryptoKey | undefined> {
  const secret = env.WATCHER_SESSION_SECRET;
  // 32 characters at least: `openssl rand -hex 32` gives 64.
  if (typeof secret !== "string" || secret.length < 32) return undefined;
  return crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
    "verify",
  ]);
}

/** A new session secret: a random id and the Worker's signature of it, so that no client can make one up. */
async function mintSecret(key: CryptoKey): Promise<string> {
  const id = base64url(crypto.getRandomValues(new Uint8Array(24)));
  const tag = await crypto.subtle.sign("HMAC", key, encoder.encode(`watcher-session:${id}`));
  return `${id}.${base64url(tag)}`;
}

async function validSecret(key: CryptoKey, secret: string): Promise<boolean> {
  const [id, tag, extra] = secret.split(".");
  if (!id || !tag || extra !== undefined || !/^[A-Za-z0-9_-]{32}$/.test(id)) return false;
  const signature = fromBase64url(tag);
  if (!signature) return false;
  return crypto.subtle.verify("HMAC", key, signature, encoder.encode(`watcher-session:${id}`));
}

/** The agent's name for a session secret: 32 hex characters of its SHA-256 (which does not give the secret back). */
export async function agentName(secret: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(`watcher-agent:${secret}`));
  return new Uint8Array(digest, 0, 16).toHex();
}

function cookieSecret(request: Request): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE) return value.join("=");
  }
  return undefined;
}

/** The session secret of a request's cookie, if it is one the Worker signed. */
async function requestSecret(request: Request, key: CryptoKey): Promise<string | undefined> {
  const secret = cookieSecret(request);
  return secret !== undefined && (await validSecret(key, secret)) ? secret : undefined;
}

/** Who counts as one client for the session limit: the IP address, an IPv6 one by its /64 (one subscriber's). */
export function clientKey(request: Request): string {
  const ip = request.headers.get("cf-connecting-ip") ?? "unknown";
  if (!ip.includes(":")) return ip;
  const [head = "", tail = ""] = ip.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase())
    .join(":")}::/64`;
}

function sessionsPerClient(env: GateEnv): number {
  const configured = Number(env.WATCHER_SESSIONS_PER_CLIENT);
  return Number.isInteger(configured) && configured > 0 ? configured : SESSIONS_PER_CLIENT;
}

/** POST /agents/session: this browser's session (an existing valid cookie), or a new one within the client's limit. */
async function openSession(request: Request, env: GateEnv, key: CryptoKey): Promise<Response> {
  const url = new URL(request.url);
  const info = (name: string): SessionInfo => ({ name, servers: listedServers(env, url.origin) });
  const existing = await requestSecret(request, key);
  if (existing !== undefined) return Response.json(info(await agentName(existing)));
  if (!env.WATCHER_CLIENTS) {
    return refuse(503, "not_configured", "The Worker has no WATCHER_CLIENTS binding to count sessions with.");
  }
  const client = clientKey(request);
  const limit = sessionsPerClient(env);
  const admitted = await env.WATCHER_CLIENTS.get(env.WATCHER_CLIENTS.idFromName(client)).admit(
    limit,
    SESSION_WINDOW_MS,
  );
  if (!admitted.ok) {
    return refuse(
      429,
      "too_many_sessions",
      `This client (${client}) opened ${limit} sessions in the last ${SESSION_WINDOW_MS / 3_600_000} hours, the most ` +
        `it may; retry in ${admitted.retryAfterS} s, or go on with a browser that still has its session.`,
      { "retry-after": String(admitted.retryAfterS) },
    );
  }
  const secret = await mintSecret(key);
  const cookie = [
    `${SESSION_COOKIE}=${secret}`,
    "Path=/agents/",
    `Max-Age=${COOKIE_MAX_AGE_S}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(url.protocol === "https:" ? ["Secure"] : []),
  ].join("; ");
  return Response.json(info(await agentName(secret)), { headers: { "set-cookie": cookie } });
}

/**
 * The checks for every request under /agents: a Response when the request is refused (or is the session request),
 * `{ name }` when it may go on to that agent, and null for a path that is neither.
 */
export async function gate(request: Request, env: GateEnv): Promise<Response | { name: string } | null> {
  const url = new URL(request.url);
  const isSession = url.pathname === SESSION_PATH;
  const prefix = `/agents/${WATCHER_AGENT}/`;
  if (!isSession && !url.pathname.startsWith(prefix)) return null;
  const upgrade = request.headers.get("upgrade")?.toLowerCase() === "websocket";
  if (isSession && request.method !== "POST") {
    return refuse(405, "method_not_allowed", "POST opens the session.", { allow: "POST" });
  }
  if (!fromOwnOrigin(request, upgrade || request.method !== "GET")) {
    return refuse(403, "foreign_origin", "The page's agent answers only pages of its own origin.");
  }
  const key = await sessionKey(env);
  if (!key) {
    return refuse(
      503,
      "not_configured",
      "WATCHER_SESSION_SECRET is not set (32 characters or more): the page's agent cannot tell sessions apart.",
    );
  }
  if (isSession) return openSession(request, env, key);
  // The whole rest of the path is the name: no sub-paths, and nothing the SDK would cut off.
  const name = url.pathname.slice(prefix.length);
  if (!WATCHER_NAME.test(name)) {
    return refuse(
      400,
      "bad_name",
      `An agent name is 1 to 64 characters of A-Z, a-z, 0-9, "_" and "-" (this one has ${name.length}).`,
    );
  }
  const secret = await requestSecret(request, key);
  if (secret === undefined || (await agentName(secret)) !== name) {
    return refuse(403, "no_session", "This agent belongs to another session: open the page to get your own.");
  }
  return { name };
}

/** Counts the sessions one client opened (one object per client, named by `clientKey`). */
export class WatcherClients extends DurableObject {
  admit(limit: number, windowMs: number): { ok: true } | { ok: false; retryAfterS: number } {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS opened (at INTEGER NOT NULL)");
    const now = Date.now();
    sql.exec("DELETE FROM opened WHERE at <= ?", now - windowMs);
    const rows = sql
      .exec<{ n: number; oldest: number | null }>("SELECT count(*) AS n, min(at) AS oldest FROM opened")
      .one();
    if (rows.n >= limit) {
      return { ok: false, retryAfterS: Math.max(1, Math.ceil(((rows.oldest ?? now) + windowMs - now) / 1000)) };
    }
    sql.exec("INSERT INTO opened (at) VALUES (?)", now);
    return { ok: true };
  }
}
