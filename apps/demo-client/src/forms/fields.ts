// What a generated form shows for each property of its JSON Schema object: the input (checkbox, select, the file
// handle picker, a JSON textarea or a text field), its id, label, choices and suggestions. The checks of the values
// are forms/schema.ts; the form itself, components/SchemaForm.tsx and components/SchemaField.tsx.
import type { Json, JsonObject } from "../../shared/mcp.ts";
import { choicesOf, fieldsOf, requiredOf, typeOf, type FieldSchema } from "./schema.ts";

/** The name of the field that takes a file handle. */
export const FILE_FIELD = "file";

export type InputKind = "checkbox" | "select" | "file" | "textarea" | "text";

export interface FormField {
  name: string;
  /** `${idPrefix}-${name}`: the input's id (labels and tests use it). */
  id: string;
  /** The schema's `title` (or the name), with " *" when the field is required. */
  label: string;
  /** The field's JSON type as the checks read it (forms/schema.ts `typeOf`). */
  type: string;
  input: InputKind;
  /** A text input's `type`: "email" for the email format (numbers are typed as text, with a decimal keyboard). */
  inputType: "text" | "email";
  inputMode?: "decimal";
  choices?: { value: Json; label: string }[];
  /** The schema's `examples` as text: suggested beside free text, not enforced. */
  suggestions?: string[];
  description?: string;
  schema: FieldSchema;
}

/** Whether the schema has a string field named `file` (it takes an uploaded file's handle). */
export function hasFileField(schema: JsonObject): boolean {
  return fieldsOf(schema).some(([name, field]) => name === FILE_FIELD && typeOf(field) === "string");
}

/** The form's fields in the schema's order; `withFilePicker`: the `file` field offers uploads (there are choices). */
export function formFieldsOf(schema: JsonObject, idPrefix: string, withFilePicker: boolean): FormField[] {
  const required = requiredOf(schema);
  const fileField = withFilePicker && hasFileField(schema);
  return fieldsOf(schema).map(([name, field]) => {
    const type = typeOf(field);
    const choices = choicesOf(field);
    const numeric = type === "number" || type === "integer";
    let input: InputKind = "text";
    if (type === "boolean") input = "checkbox";
    else if (choices) input = "select";
    else if (fileField && name === FILE_FIELD) input = "file";
    else if (type === "json") input = "textarea";
    return {
      name,
      id: `${idPrefix}-${name}`,
      label: `${field.title ?? name}${required.has(name) ? " *" : ""}`,
      type,
      input,
      inputType: !numeric && field.format === "email" ? "email" : "text",
      inputMode: numeric ? "decimal" : undefined,
      choices,
      suggestions: Array.isArray(field.examples) ? field.examples.map(String) : undefined,
      description: field.description,
      schema: field,
    };
  });
}
