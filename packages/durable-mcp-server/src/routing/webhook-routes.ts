import { isJsonContentType } from "@modelcontextprotocol/server";
import { isTaskIdShape } from "../ids.js";
import { MAX_EVENT_PAYLOAD_BYTES } from "../limits.js";
import type { RunnerClient } from "../tasks/runner-client.js";
import { hasWebhookSecret, webhookSigner, type WebhookSettings } from "../runner/index.js";
import { corsHeaders, plain } from "../util/http.js";
import { readJsonBody } from "../wire/json-body.js";

const HOOK_ID_SHAPE = /^[0-9a-f]{32}$/;

/**
 * `POST <path>/<taskId>/<hookId>?type&exp&sig`: one JSON event for one task, authorised by the URL's signature alone
 * (step.webhookUrl). Checked in this order, each answer final: a malformed path 404, a method other than POST 405, a
 * tampered or foreign signature 403, an expired one 401 (the file URLs' convention), a body that is not
 * `application/json` 415, over MAX_EVENT_PAYLOAD_BYTES 413, not JSON or nested too deep 400. Then the TaskRunner
 * answers: 202 delivered or buffered, the first answer again for an identical repeat, 409 for a different body after
 * delivery, 404 for a purged task, 410 for a finished one, 429 when its inbox is full.
 */
export async function routeWebhookRequest(
  request: Request,
  env: unknown,
  settings: WebhookSettings,
  runners: () => RunnerClient,
): Promise<Response> {
  const url = new URL(request.url);
  const parts = url.pathname.slice(settings.path.length).split("/");
  const [, taskId, hookId] = parts;
  // Without a secret no webhook URL was ever handed out: every path here is one that does not exist.
  const shaped = parts.length === 3 && isTaskIdShape(taskId) && hookId !== undefined && HOOK_ID_SHAPE.test(hookId);
  if (!shaped || !hasWebhookSecret(env, settings)) {
    return plain(404, "Not found");
  }
  if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: corsHeaders() });
  if (request.method !== "POST") return plain(405, "Method not allowed", { Allow: "POST, OPTIONS" });
  const check = await webhookSigner(env, settings).verify(url, taskId, hookId);
  if (check.check !== "valid") {
    return check.check === "expired"
      ? answer(401, { error: "expired", message: "This link has expired" })
      : answer(403, { error: "invalid_signature", message: "This link is not valid" });
  }
  if (!isJsonContentType(request.headers.get("content-type"))) {
    return answer(415, { error: "unsupported_media_type", message: "Send the event as application/json" });
  }
  const body = await readJsonBody(request, { maxBytes: MAX_EVENT_PAYLOAD_BYTES });
  switch (body.kind) {
    case "too-large":
      return answer(413, { error: "payload_too_large", message: `The body may be at most ${body.maxBytes} bytes` });
    case "json":
      break;
    default:
      return answer(400, { error: "invalid_json", message: "The body is not a JSON value" });
  }
  // The payload as JSON text: two bodies are "identical" when they hold the same JSON, however formatted.
  const payload = JSON.stringify(body.value);
  const delivered = await runners().deliverWebhook(taskId, { hookId, type: check.type, payload });
  return answer(delivered.status, delivered.body);
}

function answer(status: number, body: Record<string, unknown>): Response {
  return Response.json(body, { status, headers: corsHeaders() });
}
