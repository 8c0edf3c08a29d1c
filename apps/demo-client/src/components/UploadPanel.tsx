// The upload panel: pick a file, follow its upload (sha256, tus chunks, the server's verification), retry or
// resume one a reload interrupted (choose the same file again), discard it.
import { useState } from "react";
import { formatBytes } from "../files/format.ts";
import { CHUNK_BYTES, useUploads, type UploadRecord } from "../files/upload.ts";

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
            (file_upload_url), and the page sends the bytes there with tus in {formatBytes(CHUNK_BYTES)} chunks. An
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
