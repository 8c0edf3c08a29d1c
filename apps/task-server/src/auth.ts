import type { Caller } from "durable-mcp-server";

export interface AuthEnv {
  /** `token:principal` pairs, comma-separated (a secret: `wrangler secret put AUTH_TOKENS`). */
  AUTH_TOKENS?: string;
}

const LOCAL_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Bearer tokens from configuration, each its own principal: tasks and files of one token are invisible to every
 * other. Without AUTH_TOKENS the server is open, but only on a loopback address (local `wrangler dev`); deployed
 * without tokens, it refuses everyone rather than serve everyone as one principal.
 */
export function authenticate(request: Request, env: AuthEnv): Caller | Response {
  const tokens = parseTokens(env.AUTH_TOKENS);
  const token = request.headers.get("Authorization")?.match(/^Bearer\s+(\S+)$/i)?.[1];
  if (tokens.size === 0) {
    if (LOCAL_HOSTS.has(new URL(request.url).hostname)) return { principal: "local" };
    return challenge("This server has no AUTH_TOKENS configured; see docs/deploy.md.");
  }
  const principal = token ? tokens.get(token) : undefined;
  if (!principal) return challenge(token ? "Unknown bearer token." : "A bearer token is required.");
  return { principal, authInfo: { token: token!, clientId: principal, scopes: [] } };
}

function parseTokens(config: string | undefined): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const pair of (config ?? "").split(",")) {
    const [token, principal] = pair.trim().split(":");
    if (token && principal) tokens.set(token, principal);
  }
  return tokens;
}

function challenge(message: string): Response {
  return new Response(JSON.stringify({ error: "unauthorized", message }), {
    status: 401,
    headers: { "Content-Type": "application/json", "WWW-Authenticate": 'Bearer realm="durable-mcp-server"' },
  });
}
