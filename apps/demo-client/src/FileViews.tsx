// The page's file views: the upload panel (pick a file, follow its upload, resume one a reload interrupted) and the
// files a task produced (download, sha256 checked in the browser, then saved; an SVG or text file is previewed).
import { useEffect, useRef, useState } from "react";
import { download, formatBytes, useUploads, type FileLink, type Problem, type UploadRecord } from "./files.ts";

const STATE_LABELS: Record<UploadRecord["state"], string> = {
  hashing: "computing sha256",
  requesting: "asking for an upload URL",
  uploading: "uploading",
  verifying: "verifying",
  ready: "ready",
  failed: "failed",
  interrupted: "interrupted",
};

/** `serverUrl` is the connected server when it offers the file tools; without it, only earlier uploads show. */
export function UploadPanel({ heading, serverUrl }: { heading: string; serverUrl?: string }) {
  const store = useUploads();
  const records = store.all();
  // A new input after each pick, so that picking the same file again still starts an upload.
  const [inputKey, setInputKey] = useState(0);
  return (
    <section className="panel" data-testid="files-panel">
      <h2>{heading}</h2>
      {serverUrl ? (
        <div className="upload-picker">
          <label htmlFor="upload-input">Upload a file (a CSV for dataset_report)</label>{" "}
          <input
            key={inputKey}
            id="upload-input"
            type="file"
            data-testid="upload-input"
            onChange={(event) => {
              const file = event.target.files?.[0];
              if (!file) return;
              setInputKey((key) => key + 1);
              void store.start(serverUrl, file);
            }}
          />
          <p className="muted small">
            The page computes the file's sha256, its agent asks the server for a handle and an upload URL
            (file_upload_url), and the page sends the bytes there with tus in {formatBytes(1024 * 1024)} chunks. An
            interrupted upload resumes where it stopped; the server checks the sha256 before the file is ready.
          </p>
        </div>
      ) : (
        <p className="muted">Connect to a server that offers file_upload_url to upload files.</p>
      )}
      {records.length > 0 && (
        <div className="uploads">
          {records.map((record) => (
            <UploadCard key={record.id} record={record} current={serverUrl} />
          ))}
        </div>
      )}
    </section>
  );
}

function UploadCard({ record, current }: { record: UploadRecord; current?: string }) {
  const store = useUploads();
  const moving = ["hashing", "requesting", "uploading", "verifying"].includes(record.state);
  const stuck = record.state === "failed" || record.state === "interrupted";
  const fresh = record.resumable === false || !record.handle;
  return (
    <article
      className={`upload upload-${record.state}`}
      data-testid="upload"
      data-upload-id={record.id}
      data-upload-name={record.name}
    >
      <div className="task-head">
        <strong>{record.name}</strong>
        <span className="status" data-testid="upload-state">
          {STATE_LABELS[record.state]}
        </span>
        <span className="muted small">{formatBytes(record.size)}</span>
        {current !== undefined && record.serverUrl !== current && (
          <span className="muted small">
            on <code>{record.serverUrl}</code>
          </span>
        )}
      </div>
      {(moving || stuck) && record.size > 0 && (
        <>
          <progress data-testid="upload-progress" max={record.size} value={Math.min(record.sent, record.size)} />
          <div className="muted small" data-testid="upload-bytes">
            {record.sent} of {record.size} bytes sent, {record.confirmed} confirmed by the server
          </div>
        </>
      )}
      {record.handle && (
        <dl className="file-facts">
          <dt>handle</dt>
          <dd>
            <code data-testid="upload-handle">{record.handle}</code>
          </dd>
          <dt>size</dt>
          <dd data-testid="upload-size">{record.size} bytes</dd>
          <dt>sha256</dt>
          <dd>
            <code data-testid="upload-sha256">{record.sha256}</code>
            {record.state === "ready" && <span className="ok"> verified by the server</span>}
          </dd>
        </dl>
      )}
      {record.problem && (
        <div
          className={record.state === "failed" ? "error" : "warning"}
          role="alert"
          data-testid={record.state === "failed" ? "upload-error" : "upload-interrupted"}
        >
          <p>{record.problem.message}</p>
          {record.problem.next && <p>Next: {record.problem.next}</p>}
        </div>
      )}
      {stuck && (
        <div className="buttons">
          {store.hasFile(record.id) ? (
            <button type="button" onClick={() => store.retry(record.id)} data-testid="upload-retry">
              {fresh ? "Upload again as a new file" : "Retry upload"}
            </button>
          ) : (
            <label className="resume">
              {fresh ? `Choose ${record.name} to upload it as a new file: ` : `Choose ${record.name} again to resume: `}
              <input
                type="file"
                data-testid="resume-input"
                onChange={(event) => {
                  const file = event.target.files?.[0];
                  if (file) void store.resume(record.id, file);
                }}
              />
            </label>
          )}
          <button type="button" onClick={() => store.remove(record.id)} data-testid="upload-discard">
            Discard
          </button>
        </div>
      )}
      {record.state === "ready" && (
        <div className="buttons">
          <button type="button" className="link" onClick={() => store.remove(record.id)}>
            Remove from this list
          </button>
        </div>
      )}
    </article>
  );
}

type DownloadState =
  | { kind: "idle" }
  | { kind: "busy" }
  | { kind: "verified"; url: string; sha256: string; size: number; text?: string }
  | { kind: "failed"; problem: Problem };

/** The files a task's result names, each with a verified download. */
export function FileDownloads({ links, serverUrl, taskId }: { links: FileLink[]; serverUrl: string; taskId: string }) {
  if (links.length === 0) return null;
  return (
    <div className="files">
      {links.map((link) => (
        <FileDownload key={link.handle} link={link} serverUrl={serverUrl} taskId={taskId} />
      ))}
    </div>
  );
}

function save(url: string, name: string): void {
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.download = name;
  anchor.style.display = "none";
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

function FileDownload({ link, serverUrl, taskId }: { link: FileLink; serverUrl: string; taskId: string }) {
  const [state, setState] = useState<DownloadState>({ kind: "idle" });
  const objectUrl = useRef<string | undefined>(undefined);
  useEffect(
    () => () => {
      if (objectUrl.current) URL.revokeObjectURL(objectUrl.current);
    },
    [],
  );

  const run = async () => {
    setState({ kind: "busy" });
    if (objectUrl.current) URL.revokeObjectURL(objectUrl.current);
    objectUrl.current = undefined;
    const outcome = await download(serverUrl, link, taskId);
    if (!outcome.ok) {
      setState({ kind: "failed", problem: outcome.problem });
      return;
    }
    const url = URL.createObjectURL(outcome.blob);
    objectUrl.current = url;
    const text = outcome.blob.type.startsWith("text/") ? (await outcome.blob.text()).slice(0, 4000) : undefined;
    save(url, link.name);
    setState({ kind: "verified", url, sha256: outcome.sha256, size: outcome.size, text });
  };

  return (
    <div className="file" data-testid="file-link" data-handle={link.handle}>
      <div>
        <strong data-testid="file-name">{link.name}</strong>
        {link.mimeType && <span className="muted"> · {link.mimeType}</span>}
        {link.size !== undefined && <span data-testid="file-size"> · {link.size} bytes</span>}
      </div>
      <div className="muted small">
        sha256 <code data-testid="file-sha256">{link.sha256 ?? "not given"}</code> · handle <code>{link.handle}</code>
      </div>
      <div className="buttons">
        <button type="button" onClick={() => void run()} disabled={state.kind === "busy"} data-testid="download">
          {state.kind === "busy" ? "Downloading and checking…" : "Download"}
        </button>
      </div>
      {state.kind === "verified" && (
        <>
          <p className="ok" data-testid="download-verified">
            sha256 verified ({state.size} bytes, {state.sha256}); saved as {link.name}.{" "}
            <a href={state.url} download={link.name}>
              Save again
            </a>
          </p>
          {link.mimeType === "image/svg+xml" && (
            <img className="preview" src={state.url} alt={`preview of ${link.name}`} data-testid="download-preview" />
          )}
          {state.text !== undefined && (
            <pre className="preview" data-testid="download-preview">
              {state.text}
            </pre>
          )}
        </>
      )}
      {state.kind === "failed" && (
        <div className="error" role="alert" data-testid="download-error">
          <p>{state.problem.message}</p>
          {state.problem.next && <p>Next: {state.problem.next}</p>}
        </div>
      )}
    </div>
  );
}
