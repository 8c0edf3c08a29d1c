import { decodeJson, encodeJson, type Signer } from "./signing.js";

const PREFIX = "dmcp-q1";

/** A question of a task, as its server→client request id names it. */
export interface QuestionRef {
  taskId: string;
  /** The input key (the step's name). */
  key: string;
  /** The request's method: what an error response to it means depends on it. */
  method: string;
}

/**
 * The request id a question travels under on `tasks/result`: `dmcp-q1.<payload>.<mac>`, the MAC over the payload
 * and the caller's principal. Deterministic, so a second `tasks/result` stream asks again under the same id, and
 * unguessable and unusable by anyone but that principal.
 */
export async function questionId(signer: Signer, principal: string, question: QuestionRef): Promise<string> {
  const body = `${PREFIX}.${encodeJson([question.taskId, question.key, question.method])}`;
  return `${body}.${await signer.sign(`${body}\u0000${principal}`)}`;
}

export function looksLikeQuestionId(id: unknown): id is string {
  return typeof id === "string" && id.startsWith(`${PREFIX}.`);
}

/** The question an id names, when its MAC holds for this principal; null otherwise. */
export async function readQuestionId(signer: Signer, principal: string, id: string): Promise<QuestionRef | null> {
  const parts = id.split(".");
  if (parts.length !== 3 || parts[0] !== PREFIX) return null;
  const body = `${parts[0]}.${parts[1]}`;
  if (!(await signer.verify(`${body}\u0000${principal}`, parts[2]!))) return null;
  const decoded = decodeJson(parts[1]!);
  if (!Array.isArray(decoded) || decoded.length !== 3 || !decoded.every((part) => typeof part === "string")) {
    return null;
  }
  const [taskId, key, method] = decoded as [string, string, string];
  return { taskId, key, method };
}
