/**
 * Checks an elicitation answer against the schema the task asked with. Elicitation schemas are a flat object of
 * primitive properties (MCP's restricted JSON Schema subset), so a small checker covers them exactly.
 */
export interface AnswerProblem {
  /** Path of the offending value, relative to the answer's `content`. */
  path: string;
  message: string;
}

interface PropertySchema {
  type?: string;
  enum?: unknown[];
  oneOf?: Array<{ const?: unknown }>;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

export function checkElicitAnswer(requestedSchema: unknown, content: unknown): AnswerProblem | null {
  const schema = requestedSchema as { properties?: Record<string, PropertySchema>; required?: string[] } | undefined;
  if (typeof content !== "object" || content === null || Array.isArray(content)) {
    return { path: "", message: "content must be an object" };
  }
  const properties = schema?.properties ?? {};
  const values = content as Record<string, unknown>;
  for (const name of schema?.required ?? []) {
    if (values[name] === undefined) return { path: name, message: "is required" };
  }
  for (const [name, value] of Object.entries(values)) {
    const property = properties[name];
    if (!property)
      return { path: name, message: `is not asked for (expected: ${Object.keys(properties).join(", ") || "nothing"})` };
    const problem = checkValue(property, value);
    if (problem) return { path: name, message: problem };
  }
  return null;
}

function checkValue(property: PropertySchema, value: unknown): string | null {
  const allowed = property.enum ?? property.oneOf?.map((option) => option.const);
  if (allowed && !allowed.includes(value)) return `must be one of ${JSON.stringify(allowed)}`;
  switch (property.type) {
    case "string":
      if (typeof value !== "string") return "must be a string";
      if (property.minLength !== undefined && value.length < property.minLength)
        return `must be at least ${property.minLength} characters`;
      if (property.maxLength !== undefined && value.length > property.maxLength)
        return `must be at most ${property.maxLength} characters`;
      return null;
    case "number":
    case "integer":
      if (typeof value !== "number" || !Number.isFinite(value)) return `must be a ${property.type}`;
      if (property.type === "integer" && !Number.isInteger(value)) return "must be an integer";
      if (property.minimum !== undefined && value < property.minimum) return `must be at least ${property.minimum}`;
      if (property.maximum !== undefined && value > property.maximum) return `must be at most ${property.maximum}`;
      return null;
    case "boolean":
      return typeof value === "boolean" ? null : "must be a boolean";
    default:
      return null;
  }
}

/** Checks an answer to an outstanding input request: an ElicitResult whose accepted content fits the schema. */
export function checkInputAnswer(
  request: { method: string; params: Record<string, unknown> },
  answer: unknown,
): AnswerProblem | null {
  if (request.method !== "elicitation/create") return null;
  const result = answer as { action?: unknown; content?: unknown } | null;
  if (
    typeof result !== "object" ||
    result === null ||
    !["accept", "decline", "cancel"].includes(result.action as string)
  ) {
    return { path: "action", message: 'must be "accept", "decline" or "cancel"' };
  }
  if (result.action !== "accept") return null;
  const problem = checkElicitAnswer(request.params.requestedSchema, result.content ?? {});
  return problem && { path: problem.path ? `content.${problem.path}` : "content", message: problem.message };
}
