import { MAX_SESSION_CAPABILITIES_BYTES, SESSION_TTL_MS } from "../../limits.js";
import { toBase64Url } from "../../util/encoding.js";
import { decodeJson, encodeJson, principalTag, type Signer } from "./signing.js";

/** The version of the tasks wire this folder serves. */
export const LEGACY_TASKS_VERSION = "2025-11-25";
export const SESSION_HEADER = "mcp-session-id";
const PREFIX = "dmcp-s1";

/** What a 2025 session remembers: the negotiated version and what the client declared at `initialize`. */
export interface LegacySession {
  version: string;
  capabilities: Record<string, unknown>;
}

/** A session as read back: plus its own random id (absent on ids issued before sessions had one) and its expiry. */
export interface ReadSession extends LegacySession {
  sessionId?: string;
  expiresAt: number;
}

interface SessionPayload {
  v: string;
  c: Record<string, unknown>;
  p: string;
  e: number;
  /** Random, per `initialize`: what a per-session `tasks/list` is keyed by. */
  s: string;
}

/**
 * Issues the signed `Mcp-Session-Id` of a 2025 `initialize`: `dmcp-s1.<payload>.<mac>`. The Worker keeps no session
 * state; the id is the session. Capabilities that do not fit MAX_SESSION_CAPABILITIES_BYTES are cut down to the
 * kinds a task can use, each declared as `{}`.
 */
export async function issueSession(signer: Signer, principal: string, session: LegacySession): Promise<string> {
  const payload: SessionPayload = {
    v: session.version,
    c: boundedCapabilities(session.capabilities),
    p: await principalTag(principal),
    e: Date.now() + SESSION_TTL_MS,
    s: toBase64Url(crypto.getRandomValues(new Uint8Array(16))),
  };
  const body = `${PREFIX}.${encodeJson(payload)}`;
  return `${body}.${await signer.sign(body)}`;
}

/**
 * The session a request carries, or null when it carries none, or a forged, expired or foreign one. A signature that
 * does not verify is logged (a key that changed, or instances that do not share one, show up there first).
 */
export async function readSession(signer: Signer, principal: string, request: Request): Promise<ReadSession | null> {
  const id = request.headers.get(SESSION_HEADER);
  if (!id || id.length > 8192) return null;
  const parts = id.split(".");
  if (parts.length !== 3 || parts[0] !== PREFIX) return null;
  const body = `${parts[0]}.${parts[1]}`;
  const payload = decodeJson(parts[1]!) as Partial<SessionPayload> | undefined;
  if (!(await signer.verify(body, parts[2]!))) {
    // Only what helps tell a rotated or unshared key from a forgery: never the id, the MAC or the key.
    console.warn("durableMcp: a 2025-11-25 session id did not verify; the request is served as without a session", {
      keySource: signer.source,
      method: request.method,
      path: new URL(request.url).pathname,
      issuedAt: issuedAtOf(payload?.e),
      sameCaller: typeof payload?.p === "string" ? payload.p === (await principalTag(principal)) : undefined,
    });
    return null;
  }
  if (!payload || typeof payload.v !== "string" || typeof payload.e !== "number") return null;
  if (payload.e <= Date.now()) return null;
  if (payload.p !== (await principalTag(principal))) return null;
  const capabilities = typeof payload.c === "object" && payload.c !== null ? payload.c : {};
  const sessionId = typeof payload.s === "string" && payload.s.length > 0 ? payload.s : undefined;
  return { version: payload.v, capabilities, expiresAt: payload.e, ...(sessionId ? { sessionId } : {}) };
}

/** When an (unverified) expiry says its session was issued, for the log; undefined for anything not a date. */
function issuedAtOf(expiresAt: unknown): string | undefined {
  if (typeof expiresAt !== "number") return undefined;
  const issued = new Date(expiresAt - SESSION_TTL_MS);
  return Number.isNaN(issued.getTime()) ? undefined : issued.toISOString();
}

const TASK_KINDS = ["elicitation", "sampling", "roots", "tasks"];

function boundedCapabilities(capabilities: Record<string, unknown>): Record<string, unknown> {
  if (new TextEncoder().encode(JSON.stringify(capabilities)).byteLength <= MAX_SESSION_CAPABILITIES_BYTES) {
    return capabilities;
  }
  return Object.fromEntries(TASK_KINDS.filter((kind) => kind in capabilities).map((kind) => [kind, {}]));
}
