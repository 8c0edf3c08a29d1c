import type { ClientCapabilities } from "@modelcontextprotocol/server";
import { CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/server";

// Which questions a task may put to the client that created it. A server must not send a request of a kind the
// client did not declare (MCP lifecycle, "Capability Negotiation"); a task asks long after its creating request,
// so the capabilities that request declared are stored with the task and checked here at every question.

/** A question as a task asks it: the request method and its params. */
export interface QuestionShape {
  method: string;
  params?: Record<string, unknown>;
}

/**
 * The capability `request` needs that `declared` lacks (e.g. "elicitation.url", "sampling.tools"), or null when
 * the client can answer it. `declared` null means the question is answered through the facade tools (a client
 * without the Tasks extension: the model answers), which can take every kind.
 */
export function missingInputCapability(
  request: QuestionShape,
  declared: ClientCapabilities | null | undefined,
): string | null {
  if (declared === null || declared === undefined) return null;
  const params = request.params ?? {};
  switch (request.method) {
    case "elicitation/create": {
      const elicitation = declared.elicitation as { form?: unknown; url?: unknown } | undefined;
      const mode = params.mode === "url" ? "url" : "form";
      if (!isObject(elicitation)) return `elicitation.${mode}`;
      // An empty `elicitation: {}` is the 2025-06-18 declaration, which means form mode only.
      const formOnly = elicitation.form === undefined && elicitation.url === undefined;
      if (mode === "form") return formOnly || isObject(elicitation.form) ? null : "elicitation.form";
      return isObject(elicitation.url) ? null : "elicitation.url";
    }
    case "sampling/createMessage": {
      const sampling = declared.sampling as { tools?: unknown; context?: unknown } | undefined;
      if (!isObject(sampling)) return "sampling";
      if (params.tools !== undefined && !isObject(sampling.tools)) return "sampling.tools";
      const context = params.includeContext;
      if (context !== undefined && context !== "none" && !isObject(sampling.context)) return "sampling.context";
      return null;
    }
    case "roots/list":
      return isObject(declared.roots) ? null : "roots";
    default:
      return request.method;
  }
}

const PROBES: ReadonlyArray<[path: string, request: QuestionShape]> = [
  ["elicitation.form", { method: "elicitation/create", params: { mode: "form" } }],
  ["elicitation.url", { method: "elicitation/create", params: { mode: "url" } }],
  ["sampling", { method: "sampling/createMessage" }],
  ["sampling.tools", { method: "sampling/createMessage", params: { tools: [] } }],
  ["sampling.context", { method: "sampling/createMessage", params: { includeContext: "thisServer" } }],
  ["roots", { method: "roots/list" }],
];

/**
 * The part of `declared` that decides which questions may be asked, as a small canonical object with the same
 * answers from missingInputCapability: what is stored with a task. A client's declaration is its own JSON of any
 * size; the task keeps only these few flags.
 */
export function questionCapabilities(declared: ClientCapabilities): ClientCapabilities {
  const can = new Set(PROBES.filter(([, probe]) => missingInputCapability(probe, declared) === null).map(([p]) => p));
  const kept: Record<string, Record<string, object>> = {};
  if (can.has("elicitation.form") || can.has("elicitation.url")) {
    kept.elicitation = {
      ...(can.has("elicitation.form") ? { form: {} } : {}),
      ...(can.has("elicitation.url") ? { url: {} } : {}),
    };
  }
  if (can.has("sampling")) {
    kept.sampling = {
      ...(can.has("sampling.tools") ? { tools: {} } : {}),
      ...(can.has("sampling.context") ? { context: {} } : {}),
    };
  }
  if (can.has("roots")) kept.roots = {};
  return kept as ClientCapabilities;
}

/** The client capabilities a 2026-07-28 request declares in its `_meta` envelope (none: an empty object). */
export function declaredCapabilities(envelope: unknown): ClientCapabilities {
  const declared = (envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  return isObject(declared) ? (declared as ClientCapabilities) : {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
