// A task's questions (input_required): a form elicitation is answered with a form generated from its schema (or
// declined, or dismissed) through the agent's tasks/update; any other request is shown, with what to do instead.
import { useState } from "react";
import { errorText, type JsonObject } from "../../shared/mcp.ts";
import { useWatcherState } from "../watcher.ts";
import { SchemaForm } from "./SchemaForm.tsx";

type InputRequest = { method: string; params?: JsonObject };

export function InputRequests({ taskId, requests }: { taskId: string; requests: Record<string, InputRequest> }) {
  return (
    <div className="questions">
      {Object.entries(requests).map(([key, request]) => (
        <Question key={`${taskId}/${key}`} taskId={taskId} inputKey={key} request={request} />
      ))}
    </div>
  );
}

function Question({ taskId, inputKey, request }: { taskId: string; inputKey: string; request: InputRequest }) {
  const { call } = useWatcherState();
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const params = request.params ?? {};
  const idPrefix = `answer-${inputKey.replace(/[^A-Za-z0-9_-]/g, "_")}`;

  const send = async (response: JsonObject) => {
    setBusy(true);
    setProblem(undefined);
    try {
      await call("answer", [taskId, { [inputKey]: response }]);
      setSent(String(response.action));
    } catch (error) {
      setProblem(`The answer was not delivered: ${errorText(error)}. Send it again.`);
    } finally {
      setBusy(false);
    }
  };

  if (request.method !== "elicitation/create" || (params.mode !== undefined && params.mode !== "form")) {
    return (
      <div className="question" data-testid="question">
        <p>
          The task asks <code>{request.method}</code> ({inputKey}), which this page cannot answer:
        </p>
        <pre>{JSON.stringify(params, null, 2)}</pre>
        <p>Next: cancel the task, or answer it from a client that supports {request.method}.</p>
      </div>
    );
  }
  if (sent) {
    return (
      <p className="muted" data-testid="question-sent">
        Answer ({sent}) sent for “{inputKey}”; waiting for the task to go on…
      </p>
    );
  }
  const schema = (params.requestedSchema as JsonObject | undefined) ?? { type: "object", properties: {} };
  return (
    <div className="question" data-testid="question">
      <p className="question-message">{typeof params.message === "string" ? params.message : inputKey}</p>
      <SchemaForm
        schema={schema}
        idPrefix={idPrefix}
        submitLabel="Send answer"
        busy={busy}
        onSubmit={(content) => send({ action: "accept", content })}
        extra={
          <>
            <button type="button" disabled={busy} onClick={() => void send({ action: "decline" })}>
              Decline
            </button>
            <button type="button" disabled={busy} onClick={() => void send({ action: "cancel" })}>
              Dismiss
            </button>
          </>
        }
      />
      <p className="muted small help">
        Send answer: the task goes on with it. Decline: you say no (the task decides what that means). Dismiss: you
        leave the question unanswered and the task is told so.
      </p>
      {problem && <p className="error">{problem}</p>}
    </div>
  );
}
