// The input of a form's `file` field: a file handle typed in, or picked from this server's ready uploads (newest
// first), with a line saying which upload it is.
export interface FileChoice {
  handle: string;
  label: string;
}

export function FileInput({
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
