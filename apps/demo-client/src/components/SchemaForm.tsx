// A form generated from a JSON Schema object (a tool's inputSchema or an elicitation's requestedSchema), with the
// schema's own checks (forms/schema.ts) run before anything is sent; each field is components/SchemaField.tsx, as
// forms/fields.ts reads it from the schema.
// A string field named `file` takes a file handle: it is filled with the newest upload and offers the others.
import { useEffect, useState, type FormEvent, type ReactNode } from "react";
import type { JsonObject } from "../../shared/mcp.ts";
import { FILE_FIELD, formFieldsOf, hasFileField } from "../forms/fields.ts";
import { initialValues, validate, type Values } from "../forms/schema.ts";
import type { FileChoice } from "./FileInput.tsx";
import { SchemaField } from "./SchemaField.tsx";

export interface SchemaFormProps {
  schema: JsonObject;
  /** Prefix of the inputs' ids and names (tests and labels use them). */
  idPrefix: string;
  submitLabel: string;
  onSubmit: (value: JsonObject) => void | Promise<void>;
  busy?: boolean;
  /** Extra buttons next to submit (decline, cancel, ...). */
  extra?: ReactNode;
  /** Uploaded files for a string field named `file`, newest first: the newest fills it when it is empty. */
  fileChoices?: FileChoice[];
}

export function SchemaForm({ schema, idPrefix, submitLabel, onSubmit, busy, extra, fileChoices }: SchemaFormProps) {
  const [values, setValues] = useState<Values>(() => initialValues(schema));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const fields = formFieldsOf(schema, idPrefix, fileChoices !== undefined);
  const fillsFile = fileChoices !== undefined && hasFileField(schema);
  const newest = fileChoices?.[0]?.handle;
  const [filled, setFilled] = useState<string | undefined>(undefined);

  // The newest upload fills the file field while it is empty or still holds the upload filled in before it.
  useEffect(() => {
    if (!fillsFile || !newest || newest === filled) return;
    setValues((current) => {
      const value = current[FILE_FIELD];
      return value === "" || value === filled ? { ...current, [FILE_FIELD]: newest } : current;
    });
    setFilled(newest);
  }, [fillsFile, newest, filled]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(schema, values);
    if (!checked.ok) {
      setErrors(checked.errors);
      return;
    }
    setErrors({});
    void onSubmit(checked.value);
  };

  const failing = Object.entries(errors);
  return (
    <form className="schema-form" onSubmit={submit} noValidate data-testid={`${idPrefix}-form`}>
      {fields.length === 0 && <p className="muted">No fields.</p>}
      {fields.map((field) => (
        <SchemaField
          key={field.name}
          field={field}
          value={values[field.name]}
          set={(value) => setValues((current) => ({ ...current, [field.name]: value }))}
          error={errors[field.name]}
          fileChoices={fileChoices ?? []}
        />
      ))}
      {failing.length > 0 && (
        <p className="error" data-testid={`${idPrefix}-invalid`}>
          The answer does not fit the schema ({failing.map(([name, message]) => `${name} ${message}`).join("; ")}).
          Correct the marked fields and submit again.
        </p>
      )}
      <div className="buttons">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
        {extra}
      </div>
    </form>
  );
}
