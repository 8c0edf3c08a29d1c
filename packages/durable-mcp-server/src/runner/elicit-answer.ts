import { specTypeSchemas } from "@modelcontextprotocol/server";

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

/**
 * Checks an answer to an outstanding input request against the result type of its kind, with the SDK's schemas:
 * `elicitation/create` an ElicitResult (accepted content must also fit the requested schema),
 * `sampling/createMessage` a CreateMessageResult (its tools variant when the request offered tools), `roots/list` a
 * ListRootsResult. Null when it fits.
 */
export function checkInputAnswer(
  request: { method: string; params: Record<string, unknown> },
  answer: unknown,
): AnswerProblem | null {
  const schema = answerSchemaOf(request);
  if (!schema) return null;
  const result = schema["~standard"].validate(answer);
  // The SDK's spec schemas are zod, so validation is synchronous.
  if (result instanceof Promise) throw new Error("the SDK's answer schemas validate synchronously");
  if (result.issues) {
    const issue = result.issues[0]!;
    const path = (issue.path ?? []).map((part) => String(typeof part === "object" ? part.key : part)).join(".");
    return { path, message: issue.message };
  }
  if (request.method !== "elicitation/create") return null;
  const elicit = answer as { action: string; content?: unknown };
  if (elicit.action !== "accept") return null;
  const problem = checkElicitAnswer(request.params.requestedSchema, elicit.content ?? {});
  return problem && { path: problem.path ? `content.${problem.path}` : "content", message: problem.message };
}

/** What an answer to `request` must be; undefined for a method no schema is known for. */
function answerSchemaOf(request: { method: string; params: Record<string, unknown> }) {
  switch (request.method) {
    case "elicitation/create":
      return specTypeSchemas.ElicitResult;
    case "sampling/createMessage":
      return request.params.tools === undefined
        ? specTypeSchemas.CreateMessageResult
        : specTypeSchemas.CreateMessageResultWithTools;
    case "roots/list":
      return specTypeSchemas.ListRootsResult;
    default:
      return undefined;
  }
}

/** How each kind of question is answered, for the texts that tell a model (the facade's handle). */
export function exampleAnswer(request: { method: string; params: Record<string, unknown> }): unknown {
  switch (request.method) {
    case "sampling/createMessage":
      return { role: "assistant", content: { type: "text", text: "<your reply>" }, model: "<your model name>" };
    case "roots/list":
      return { roots: [{ uri: "file:///<path>", name: "<optional name>" }] };
    default:
      return { action: "accept", content: exampleContent(request.params.requestedSchema) };
  }
}

function exampleContent(schema: unknown): Record<string, unknown> {
  const properties =
    (schema as { properties?: Record<string, { type?: string; enum?: unknown[] }> } | undefined)?.properties ?? {};
  return Object.fromEntries(
    Object.entries(properties).map(([name, property]) => [name, property.enum?.[0] ?? `<${property.type ?? "value"}>`]),
  );
}
