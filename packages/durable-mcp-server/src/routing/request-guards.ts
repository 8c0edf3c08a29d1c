import {
  isInitializeRequest,
  localhostAllowedHostnames,
  ProtocolError,
  ProtocolErrorCode,
  validateHostHeader,
  validateOriginHeader,
} from "@modelcontextprotocol/server";

export interface HostPolicy {
  /** Hostnames (no port) whose Host header is accepted; null: any. */
  hosts: string[] | null;
  /** Hostnames (no port) whose Origin header is accepted; null: any. An absent Origin always passes. */
  origins: string[] | null;
}

/**
 * DNS-rebinding protection. A Worker cannot tell it serves loopback (its URL follows the Host header), so
 * without `authenticate` only loopback Hosts and Origins pass unless the author lists more. With `authenticate`
 * the credential is the protection and nothing is checked unless a list is given. Loopback stays allowed
 * in every case: a rebound page's requests carry the attacker's hostname, never a loopback one.
 */
export function hostPolicy(options: {
  authenticated: boolean;
  allowedHosts?: string[];
  allowedOrigins?: string[];
}): HostPolicy {
  const loopback = localhostAllowedHostnames();
  const hosts = options.allowedHosts?.map(normaliseHostname);
  const origins = options.allowedOrigins?.map(normaliseHostname);
  const checkHosts = !options.authenticated || hosts !== undefined;
  const checkOrigins = !options.authenticated || hosts !== undefined || origins !== undefined;
  return {
    hosts: checkHosts ? [...loopback, ...(hosts ?? [])] : null,
    // A page served from an allowed host calls its own Worker with that host as its Origin.
    origins: checkOrigins ? [...loopback, ...(hosts ?? []), ...(origins ?? [])] : null,
  };
}

/** Accepts "example.com", "Example.COM:443" or "https://example.com" for the hostname "example.com". */
function normaliseHostname(entry: string): string {
  const trimmed = entry.trim().toLowerCase();
  if (trimmed.includes("://*")) return trimmed; // the SDK's `<scheme>://*` form for browser extensions
  try {
    return new URL(trimmed.includes("://") ? trimmed : `http://${trimmed}`).hostname;
  } catch {
    throw new Error(`durableMcp: ${JSON.stringify(entry)} is not a hostname for allowedHosts/allowedOrigins`);
  }
}

/** The refusal for a Host or Origin the policy does not allow (answered 403), or null to go on. */
export function hostRefusal(request: Request, policy: HostPolicy): ProtocolError | null {
  if (policy.hosts) {
    // The Host header when the runtime passes it on, else the URL's host (which workerd derives from it).
    const host = request.headers.get("host") ?? new URL(request.url).host;
    const checked = validateHostHeader(host, policy.hosts);
    if (!checked.ok) return new ProtocolError(ProtocolErrorCode.InvalidRequest, `Forbidden: ${checked.message}`);
  }
  if (policy.origins) {
    const checked = validateOriginHeader(request.headers.get("origin"), policy.origins);
    if (!checked.ok) return new ProtocolError(ProtocolErrorCode.InvalidRequest, `Forbidden: ${checked.message}`);
  }
  return null;
}

/** The one protocol revision that had JSON-RPC batching; 2025-06-18 removed it, and it never came back. */
const BATCHING_REVISION = "2025-03-26";

/**
 * Refuses a JSON-RPC batch on a protocol revision without batching. The revision is the MCP-Protocol-Version
 * header's (absent means 2025-03-26, as the spec has servers assume), or for a batch carrying `initialize` the
 * revision that initialize asks for. The refusal is answered 400.
 */
export function batchRefusal(request: Request, body: unknown): ProtocolError | null {
  if (!Array.isArray(body)) return null;
  const initialize = body.find((message) => isInitializeRequest(message));
  const requested = isInitializeRequest(initialize)
    ? initialize.params.protocolVersion
    : (request.headers.get("mcp-protocol-version") ?? BATCHING_REVISION);
  if (requested === BATCHING_REVISION) return null;
  return new ProtocolError(
    ProtocolErrorCode.InvalidRequest,
    `Invalid Request: JSON-RPC batches are not supported on protocol version ${requested}`,
  );
}
