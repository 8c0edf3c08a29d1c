import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { jsonRpcErrorResponse } from "../errors/jsonrpc.js";
import { MAX_STREAMS_PER_PRINCIPAL, MAX_STREAMS_PER_TASK } from "../limits.js";

// Bounds on long-lived streams (docs/limits.md): per principal here, in the Worker instance that holds them; per task
// in the TaskRunner (its `watch` answers TOO_MANY_STREAMS). Without them one caller could hold any number of streams,
// each costing memory in the Worker and a listener in the object, until the tasks end.

/** Streams each principal holds open through this Worker instance. */
const openByPrincipal = new Map<string, number>();

/**
 * Takes one of `principal`'s stream slots: the function that gives it back (idempotent), or null when the principal
 * already holds MAX_STREAMS_PER_PRINCIPAL.
 */
export function takeStreamSlot(principal: string): (() => void) | null {
  const open = openByPrincipal.get(principal) ?? 0;
  if (open >= MAX_STREAMS_PER_PRINCIPAL) return null;
  openByPrincipal.set(principal, open + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (openByPrincipal.get(principal) ?? 1) - 1;
    if (left <= 0) openByPrincipal.delete(principal);
    else openByPrincipal.set(principal, left);
  };
}

/** Streams `principal` holds open through this Worker instance (for tests). */
export function openStreamsOf(principal: string): number {
  return openByPrincipal.get(principal) ?? 0;
}

/** The refusal of a stream over a bound: HTTP 429 with a JSON-RPC error naming the bound. */
export function tooManyStreams(id: string | number | null, scope: "principal" | "task"): Response {
  const limit = scope === "principal" ? MAX_STREAMS_PER_PRINCIPAL : MAX_STREAMS_PER_TASK;
  const message =
    scope === "principal"
      ? `Too many open streams: this caller already holds ${limit}; close one (or let its task finish) first`
      : `Too many open streams: this task already has ${limit}; close one (or let the task finish) first`;
  return jsonRpcErrorResponse(id, new ProtocolError(ProtocolErrorCode.InvalidRequest, message, { limit, scope }), 429);
}
