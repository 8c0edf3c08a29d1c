// A form generated from a JSON Schema object (a tool's inputSchema or an elicitation's requestedSchema), with the
// schema's own checks (forms/schema.ts) run before anything is sent.
// A string field named `file` takes a file handle: it is filled with the newest upload and offers the others.
import { useEffect, useState, type FormEvent, type ReactNode } from "react";
import type { JsonObject } from "../../shared/mcp.ts";
import { choicesOf, fieldsOf, initialValues, requiredOf, typeOf, validate, type Values } from "../forms/schema.ts";

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

export interface FileChoice {
  handle: string;
  label: string;
}

/** The name of the field that takes a file handle. */
export const FILE_FIELD = "file";

export function SchemaForm({ schema, idPrefix, submitLabel, onSubmit, busy, extra, fileChoices }: SchemaFormProps) {
  const [values, setValues] = useState<Values>(() => initialValues(schema));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const required = requiredOf(schema);
  const fields = fieldsOf(schema);
  const fileField = fileChoices
    ? fields.find(([name, field]) => name === FILE_FIELD && typeOf(field) === "string")
    : undefined;
  const newest = fileChoices?.[0]?.handle;
  const [filled, setFilled] = useState<string | undefined>(undefined);

  // The newest upload fills the file field while it is empty or still holds the upload filled in before it.
  useEffect(() => {
    if (!fileField || !newest || newest === filled) return;
    setValues((current) => {
      const value = current[FILE_FIELD];
      return value === "" || value === filled ? { ...current, [FILE_FIELD]: newest } : current;
    });
    setFilled(newest);
  }, [fileField, newest, filled]);

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
      {fields.map(([name, field]) => {
        const id = `${idPrefix}-${name}`;
        const type = typeOf(field);
        const choices = choicesOf(field);
        const suggestions = Array.isArray(field.examples) ? field.examples.map(String) : undefined;
        const label = `${field.title ?? name}${required.has(name) ? " *" : ""}`;
        const set = (value: string | boolean) => setValues((current) => ({ ...current, [name]: value }));
        let input: ReactNode;
        if (type === "boolean") {
          input = (
            <input
              id={id}
              name={name}
              type="checkbox"
              checked={values[name] === true}
              onChange={(e) => set(e.target.checked)}
            />
          );
        } else if (choices) {
          input = (
            <select id={id} name={name} value={String(values[name] ?? "")} onChange={(e) => set(e.target.value)}>
              <option value="">—</option>
              {choices.map((choice) => (
                <option key={String(choice.value)} value={String(choice.value)}>
                  {choice.label}
                </option>
              ))}
            </select>
          );
        } else if (fileField && name === FILE_FIELD) {
          input = (
            <FileInput
              id={id}
              name={name}
              value={String(values[name] ?? "")}
              choices={fileChoices ?? []}
              set={set}
              invalid={!!errors[name]}
            />
          );
        } else if (type === "json") {
          input = (
            <textarea id={id} name={name} value={String(values[name] ?? "")} onChange={(e) => set(e.target.value)} />
          );
        } else {
          input = (
            <input
              id={id}
              name={name}
              type={type === "number" || type === "integer" ? "text" : field.format === "email" ? "email" : "text"}
              inputMode={type === "number" || type === "integer" ? "decimal" : undefined}
              value={String(values[name] ?? "")}
              onChange={(e) => set(e.target.value)}
              aria-invalid={errors[name] ? true : undefined}
              aria-describedby={field.description ? `${id}-help` : undefined}
              list={suggestions ? `${id}-examples` : undefined}
            />
          );
          if (suggestions) {
            input = (
              <>
                {input}
                <datalist id={`${id}-examples`}>
                  {suggestions.map((value) => (
                    <option key={value} value={value} />
                  ))}
                </datalist>
              </>
            );
          }
        }
        return (
          <div className={`field field-${type}`} key={name}>
            <label htmlFor={id}>{label}</label>
            {input}
            {field.description && (
              <small className="muted" id={`${id}-help`}>
                {field.description}
              </small>
            )}
            {errors[name] && (
              <small className="field-error" role="alert">
                {name} {errors[name]}
              </small>
            )}
          </div>
        );
      })}
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

function FileInput({
  id,
  name,
  value,
  choices,
  set,
  invalid,
}: {
  id: string;
  name: string;
  value: string;
  choices: FileChoice[];
  set: (value: string) => void;
  invalid: boolean;
}) {
  const chosen = choices.find((choice) => choice.handle === value.trim());
  return (
    <div className="file-input">
      <input
        id={id}
        name={name}
        type="text"
        value={value}
        placeholder="file_…"
        spellCheck={false}
        onChange={(e) => set(e.target.value)}
        aria-invalid={invalid ? true : undefined}
      />
      {choices.length > 0 ? (
        <>
          <select
            id={`${id}-uploads`}
            aria-label="Pick an uploaded file"
            value={chosen ? chosen.handle : ""}
            onChange={(e) => e.target.value && set(e.target.value)}
          >
            <option value="">Pick an uploaded file…</option>
            {choices.map((choice) => (
              <option key={choice.handle} value={choice.handle}>
                {choice.label}
              </option>
            ))}
          </select>
          <small className="muted" data-testid={`${id}-chosen`}>
            {chosen ? `The upload ${chosen.label}.` : "Not one of the files uploaded above: the server checks it."}
          </small>
        </>
      ) : (
        <small className="muted">Upload a file above and its handle appears here.</small>
      )}
    </div>
  );
}
