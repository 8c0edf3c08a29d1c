import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";
import { isTaskIdShape } from "../../ids.js";
import type { IndexCursor, IndexScope } from "../../runner/index.js";
import { decodeJson, encodeJson, type Signer } from "./signing.js";

const PREFIX = "dmcp-c1";

/** The list a cursor belongs to, as its MAC binds it: one principal's, or one session's. */
function listName(scope: IndexScope): string {
  return scope.session
    ? `session\u0000${scope.principal}\u0000${scope.session.id}`
    : `principal\u0000${scope.principal}`;
}

/**
 * A `tasks/list` cursor: `dmcp-c1.<payload>.<mac>`, the payload where the next page starts, the MAC over it and the
 * list it pages. Signed so that only a cursor this server issued, for this very list, is read back.
 */
export async function issueCursor(signer: Signer, scope: IndexScope, after: IndexCursor): Promise<string> {
  const body = `${PREFIX}.${encodeJson([after.indexedAt, after.taskId])}`;
  return `${body}.${await signer.sign(`${body}\u0000${listName(scope)}`)}`;
}

/**
 * Where the page a cursor asks for starts; null for no cursor. A cursor that is not one issued for this list (forged,
 * altered, another caller's or session's, or any cursor where there is no list) is -32602.
 */
export async function readCursor(
  signer: Signer,
  scope: IndexScope | null,
  cursor: unknown,
): Promise<IndexCursor | null> {
  if (cursor === undefined) return null;
  if (typeof cursor === "string" && scope !== null && cursor.length <= 512) {
    const parts = cursor.split(".");
    if (parts.length === 3 && parts[0] === PREFIX) {
      const body = `${parts[0]}.${parts[1]}`;
      if (await signer.verify(`${body}\u0000${listName(scope)}`, parts[2]!)) {
        const decoded = decodeJson(parts[1]!);
        if (Array.isArray(decoded) && Number.isSafeInteger(decoded[0]) && isTaskIdShape(decoded[1])) {
          return { indexedAt: decoded[0] as number, taskId: decoded[1] };
        }
      }
    }
  }
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Invalid params: unknown cursor");
}
