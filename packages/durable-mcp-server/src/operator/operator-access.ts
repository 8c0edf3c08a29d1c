import { OperatorError } from "./operator-errors.js";

/**
 * Who is operating: the name every audit entry carries.
 *
 * @example
 * ```ts
 * import type { Operator } from "durable-mcp-server";
 *
 * const operator: Operator = { name: "oncall:alice" };
 * ```
 */
export interface Operator {
  name: string;
}

/**
 * Decides who may use the operator API: return an Operator, or a Response (a 401 with a challenge, say) to answer
 * the request with instead.
 *
 * @example
 * ```ts
 * import type { AuthenticateOperator } from "durable-mcp-server";
 *
 * interface Env {
 *   OPS_TOKEN: string;
 * }
 *
 * const authenticate: AuthenticateOperator<Env> = (request, env) =>
 *   request.headers.get("Authorization") === `Bearer ${env.OPS_TOKEN}`
 *     ? { name: "ops" }
 *     : new Response("unauthorized", { status: 401, headers: { "WWW-Authenticate": "Bearer" } });
 * ```
 */
export type AuthenticateOperator<Env> = (
  request: Request,
  env: Env,
) => Operator | Response | Promise<Operator | Response>;

/**
 * The operator API's settings (`durableMcp(createServer, { operator })`): who may operate and where it is served.
 * Left out, the API answers on loopback Hosts only (`wrangler dev`); `false` turns it off.
 *
 * @example
 * ```ts
 * import type { OperatorOptions } from "durable-mcp-server";
 *
 * const operator: OperatorOptions<unknown> = { token: "OPERATOR_TOKEN", path: "/ops-api" };
 * ```
 */
export interface OperatorOptions<Env> {
  /** Decides who may operate. Never the MCP `authenticate`: an MCP caller's credential is not an operator's. */
  authenticate?: AuthenticateOperator<Env>;
  /**
   * Env binding of a secret operator token (≥ 32 characters), sent as `Authorization: Bearer <token>`; the operator
   * is then named "token". The MCP path refuses a request bearing it. While the secret is not set (and there is no
   * `authenticate`), the API is served on loopback Hosts only, as when unconfigured.
   */
  token?: string;
  /** Where `fetch` serves the API. Default "/operator". Given alone, the API is served on loopback Hosts only. */
  path?: string;
  /**
   * The BulkDriver Durable Object binding (export `mcp.BulkDriver` under its `class_name`): bulk jobs then run to their
   * end with nobody reading them. Default "BULK_DRIVER"; where it is not bound (or `false`), a job runs its next slice
   * when it is read, as the CLI's progress polling does (docs/operations.md).
   */
  driver?: string | false;
}

export interface OperatorSettings<Env> {
  path: string;
  /** "loopback": no option was given, so only loopback Hosts are served (wrangler dev), as the operator "local". */
  mode: "off" | "loopback" | "configured";
  authenticate?: AuthenticateOperator<Env>;
  tokenBinding?: string;
  /** The BulkDriver binding, if one may be bound. */
  driverBinding?: string;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export function resolveOperator<Env>(option: OperatorOptions<Env> | false | undefined): OperatorSettings<Env> {
  const path = (option ? option.path : undefined)?.replace(/\/+$/, "") ?? "/operator";
  if (!path.startsWith("/"))
    throw new Error(`durableMcp: operator.path must start with "/" (got ${JSON.stringify(path)})`);
  if (option === false) return { path, mode: "off" };
  const driverBinding = option?.driver === false ? undefined : (option?.driver ?? "BULK_DRIVER");
  // Neither authenticate nor token: loopback Hosts only (wrangler dev), wherever it is mounted.
  if (option === undefined || (!option.authenticate && !option.token)) return { path, mode: "loopback", driverBinding };
  return { path, mode: "configured", authenticate: option.authenticate, tokenBinding: option.token, driverBinding };
}

function bearer(request: Request): string | null {
  const header = request.headers.get("authorization");
  return header?.startsWith("Bearer ") ? header.slice(7).trim() : null;
}

function tokenOf(env: unknown, binding: string | undefined): string | undefined {
  if (!binding) return undefined;
  const secret = (env as Record<string, unknown> | undefined)?.[binding];
  return typeof secret === "string" && secret.length >= 32 ? secret : undefined;
}

/** Compares in time independent of where the strings first differ. */
function sameSecret(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  let diff = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  return diff === 0;
}

/** Who operates this request, or the OperatorError (401/403/404) or the authenticate's own Response. */
export async function operatorOf<Env>(
  request: Request,
  env: Env,
  settings: OperatorSettings<Env>,
): Promise<Operator | Response> {
  if (settings.mode === "off") throw new OperatorError(404, "operator_off", "the operator API is off");
  const token = tokenOf(env, settings.tokenBinding);
  // Only a token was configured and its secret is not set (a local run without it): loopback only, as if unconfigured.
  const unset = settings.mode === "configured" && !settings.authenticate && token === undefined;
  if (settings.mode === "loopback" || unset) {
    const host = new URL(request.url).hostname;
    if (!LOOPBACK.has(host)) {
      throw new OperatorError(
        403,
        "operator_off",
        "the operator API is served only on loopback unless durableMcp's operator option is configured",
      );
    }
    return { name: "local" };
  }
  const given = bearer(request);
  if (token && given !== null && sameSecret(given, token)) return { name: "token" };
  if (settings.authenticate) {
    const operator = await settings.authenticate(request, env);
    if (operator instanceof Response) return operator;
    if (typeof operator?.name !== "string" || operator.name.length === 0) {
      throw new Error("operator.authenticate() must return an Operator with a non-empty name, or a Response");
    }
    return operator;
  }
  throw new OperatorError(401, "unauthorized", "an operator token is required (Authorization: Bearer …)");
}

/** Whether an MCP request bears the operator token (it is refused there: the two credentials never cross). */
export function bearsOperatorToken<Env>(request: Request, env: Env, settings: OperatorSettings<Env>): boolean {
  const token = tokenOf(env, settings.tokenBinding);
  const given = token ? bearer(request) : null;
  return token !== undefined && given !== null && sameSecret(given, token);
}
