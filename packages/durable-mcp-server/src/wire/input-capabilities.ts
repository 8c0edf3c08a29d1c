import type { ClientCapabilities } from "@modelcontextprotocol/server";
import { CLIENT_CAPABILITIES_META } from "./protocol.js";

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

/** The client capabilities a 2026-07-28 request declares in its `_meta` envelope (none: an empty object). */
export function declaredCapabilities(envelope: unknown): ClientCapabilities {
  const declared = (envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META];
  return isObject(declared) ? (declared as ClientCapabilities) : {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
