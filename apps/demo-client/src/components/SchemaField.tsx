// One field of a generated form (components/SchemaForm.tsx): its label, the input forms/fields.ts chose for it, the
// schema's description as help, and the check's message when its value does not fit.
import type { ReactNode } from "react";
import type { FormField } from "../forms/fields.ts";
import { FileInput, type FileChoice } from "./FileInput.tsx";

export interface SchemaFieldProps {
  field: FormField;
  value: string | boolean | undefined;
  set: (value: string | boolean) => void;
  error?: string;
  fileChoices: FileChoice[];
}

export function SchemaField({ field, value, set, error, fileChoices }: SchemaFieldProps) {
  return (
    <div className={`field field-${field.type}`}>
      <label htmlFor={field.id}>{field.label}</label>
      <FieldInput field={field} value={value} set={set} error={error} fileChoices={fileChoices} />
      {field.description && (
        <small className="muted" id={`${field.id}-help`}>
          {field.description}
        </small>
      )}
      {error && (
        <small className="field-error" role="alert">
          {field.name} {error}
        </small>
      )}
    </div>
  );
}

function FieldInput({ field, value, set, error, fileChoices }: SchemaFieldProps): ReactNode {
  const { id, name } = field;
  const text = String(value ?? "");
  switch (field.input) {
    case "checkbox":
      return (
        <input id={id} name={name} type="checkbox" checked={value === true} onChange={(e) => set(e.target.checked)} />
      );
    case "select":
      return (
        <select id={id} name={name} value={text} onChange={(e) => set(e.target.value)}>
          <option value="">—</option>
          {(field.choices ?? []).map((choice) => (
            <option key={String(choice.value)} value={String(choice.value)}>
              {choice.label}
            </option>
          ))}
        </select>
      );
    case "file":
      return <FileInput id={id} name={name} value={text} choices={fileChoices} set={set} invalid={!!error} />;
    case "textarea":
      return <textarea id={id} name={name} value={text} onChange={(e) => set(e.target.value)} />;
    case "text":
      return <TextInput field={field} value={text} set={set} invalid={!!error} />;
  }
}

function TextInput({
  field,
  value,
  set,
  invalid,
}: {
  field: FormField;
  value: string;
  set: (value: string) => void;
  invalid: boolean;
}) {
  const { id, suggestions } = field;
  const input = (
    <input
      id={id}
      name={field.name}
      type={field.inputType}
      inputMode={field.inputMode}
      value={value}
      onChange={(e) => set(e.target.value)}
      aria-invalid={invalid ? true : undefined}
      aria-describedby={field.description ? `${id}-help` : undefined}
      list={suggestions ? `${id}-examples` : undefined}
    />
  );
  if (!suggestions) return input;
  return (
    <>
      {input}
      <datalist id={`${id}-examples`}>
        {suggestions.map((suggestion) => (
          <option key={suggestion} value={suggestion} />
        ))}
      </datalist>
    </>
  );
}
