// A final task's outcome: cancelled, failed (its error), or its result (text, the error envelope's next step) with
// the files it produced.
import { resultText, type JsonObject, type TaskSnapshot } from "../../shared/mcp.ts";
import type { TaskRecord } from "../../shared/watcher-state.ts";
import { fileLinksOf } from "../files/download.ts";
import { FileDownloads } from "./FileDownloads.tsx";

export function TaskOutcome({ snapshot, record }: { snapshot: TaskSnapshot; record: TaskRecord }) {
  if (snapshot.status === "cancelled") return <p data-testid="task-result">The task was cancelled.</p>;
  if (snapshot.status === "failed") {
    return (
      <p className="error" data-testid="task-result">
        The task failed: {snapshot.error?.message ?? JSON.stringify(snapshot.error ?? snapshot.result ?? {})}
      </p>
    );
  }
  const result = snapshot.result;
  const text = resultText(result);
  const envelope = (result?.structuredContent as JsonObject | undefined)?.error as JsonObject | undefined;
  return (
    <>
      <div className={result?.isError === true ? "error" : "ok"} data-testid="task-result">
        <p>{text || JSON.stringify(result ?? {})}</p>
        {envelope && typeof envelope.recoveryHint === "string" && !text.includes(envelope.recoveryHint) && (
          <p>Next: {envelope.recoveryHint}</p>
        )}
      </div>
      <FileDownloads links={fileLinksOf(result)} serverUrl={record.serverUrl} taskId={record.taskId} />
    </>
  );
}
