// The checks of a form generated from a JSON Schema object (a tool's inputSchema or an elicitation's
// requestedSchema): its fields, their types, choices and defaults, and the schema's own checks run before anything is
// sent (required fields, types, ranges, lengths, patterns, formats, enums). The form itself: components/SchemaForm.tsx.
import type { Json, JsonObject } from "../../shared/mcp.ts";

export type FieldSchema = {
  type?: string | string[];
  title?: string;
  description?: string;
  default?: Json;
  enum?: Json[];
  /** Suggested values (not a restriction): the form offers them beside free text. */
  examples?: Json[];
  oneOf?: { const?: Json; title?: string }[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
};

export type Values = Record<string, string | boolean>;

function asObject(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function fieldsOf(schema: JsonObject): [string, FieldSchema][] {
  return Object.entries(asObject(schema.properties)).map(([name, field]) => [name, asObject(field) as FieldSchema]);
}

export function requiredOf(schema: JsonObject): Set<string> {
  return new Set(
    Array.isArray(schema.required) ? schema.required.filter((n): n is string => typeof n === "string") : [],
  );
}

export function typeOf(field: FieldSchema): string {
  const type = Array.isArray(field.type) ? field.type.find((t) => t !== "null") : field.type;
  if (type) return type;
  if (field.enum || field.oneOf) return "string";
  return "json";
}

export function choicesOf(field: FieldSchema): { value: Json; label: string }[] | undefined {
  if (field.enum) return field.enum.map((value) => ({ value, label: String(value) }));
  if (field.oneOf?.every((option) => option.const !== undefined)) {
    return field.oneOf.map((option) => ({ value: option.const ?? null, label: option.title ?? String(option.const) }));
  }
  return undefined;
}

export function initialValues(schema: JsonObject): Values {
  const values: Values = {};
  for (const [name, field] of fieldsOf(schema)) {
    const type = typeOf(field);
    if (type === "boolean") values[name] = field.default === true;
    else if (field.default === undefined) values[name] = "";
    else values[name] = type === "json" ? JSON.stringify(field.default) : String(field.default);
  }
  return values;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Checks the form's values against the schema: the JSON object to send, or a message per failing field. */
export function validate(
  schema: JsonObject,
  values: Values,
): { ok: true; value: JsonObject } | { ok: false; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const value: JsonObject = {};
  const required = requiredOf(schema);
  for (const [name, field] of fieldsOf(schema)) {
    const type = typeOf(field);
    const raw = values[name];
    if (type === "boolean") {
      value[name] = raw === true;
      continue;
    }
    const text = typeof raw === "string" ? raw.trim() : "";
    if (text === "") {
      if (required.has(name)) errors[name] = "is required";
      continue;
    }
    const choices = choicesOf(field);
    if (choices) {
      const choice = choices.find((c) => String(c.value) === text);
      if (!choice) errors[name] = `must be one of: ${choices.map((c) => c.label).join(", ")}`;
      else value[name] = choice.value;
      continue;
    }
    if (type === "number" || type === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n)) errors[name] = "must be a number";
      else if (type === "integer" && !Number.isInteger(n)) errors[name] = "must be a whole number";
      else if (field.minimum !== undefined && n < field.minimum) errors[name] = `must be at least ${field.minimum}`;
      else if (field.maximum !== undefined && n > field.maximum) errors[name] = `must be at most ${field.maximum}`;
      else if (field.exclusiveMinimum !== undefined && n <= field.exclusiveMinimum)
        errors[name] = `must be more than ${field.exclusiveMinimum}`;
      else if (field.exclusiveMaximum !== undefined && n >= field.exclusiveMaximum)
        errors[name] = `must be less than ${field.exclusiveMaximum}`;
      else value[name] = n;
      continue;
    }
    if (type === "string") {
      if (field.minLength !== undefined && text.length < field.minLength)
        errors[name] = `must be at least ${field.minLength} characters`;
      else if (field.maxLength !== undefined && text.length > field.maxLength)
        errors[name] = `must be at most ${field.maxLength} characters`;
      else if (field.format === "email" && !EMAIL.test(text)) errors[name] = "must be an email address";
      else if (field.pattern !== undefined && !safeTest(field.pattern, text))
        errors[name] = field.format ? `must be a valid ${field.format}` : `must match ${field.pattern}`;
      else value[name] = text;
      continue;
    }
    try {
      value[name] = JSON.parse(text) as Json;
    } catch {
      errors[name] = "must be JSON";
    }
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, value };
}

function safeTest(pattern: string, text: string): boolean {
  try {
    return new RegExp(pattern, "u").test(text);
  } catch {
    return true; // a pattern this browser cannot compile is left to the server
  }
}
