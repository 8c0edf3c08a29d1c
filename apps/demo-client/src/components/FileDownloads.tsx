// The files a task produced: each downloaded on demand, its sha256 checked in the browser, then saved; an SVG or
// text file is previewed.
import { useEffect, useRef, useState } from "react";
import type { Problem } from "../../shared/watcher-state.ts";
import { download, type FileLink } from "../files/download.ts";
import { useWatcherState } from "../watcher.ts";

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
  const { tool } = useWatcherState();
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
    const outcome = await download(tool, serverUrl, link, taskId);
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
