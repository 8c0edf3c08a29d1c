// "Start a tool": the connected server's tools (tools/list), and a form generated from the chosen one's input schema
// (file fields offer this server's ready uploads); the agent starts it, as a task when the tool supports that.
import { useState } from "react";
import { errorText, taskSupport, type JsonObject } from "../../shared/mcp.ts";
import type { Connection, StartOutcome } from "../../shared/watcher-state.ts";
import { formatBytes } from "../files/format.ts";
import { useUploads } from "../files/upload.ts";
import { callWatcher } from "../watcher.ts";
import { SchemaForm, type FileChoice } from "./SchemaForm.tsx";

export function Tools({
  connection,
  heading,
}: {
  connection: Extract<Connection, { state: "connected" }>;
  heading: string;
}) {
  const [selected, setSelected] = useState<string | undefined>();
  const fileChoices: FileChoice[] = useUploads()
    .ready(connection.url)
    .map((upload) => ({
      handle: upload.handle ?? upload.id,
      label: `${upload.name} (${formatBytes(upload.size)}, ${new Date(upload.startedAt).toLocaleTimeString()}) · ${upload.handle}`,
    }));
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ kind: "ok" | "error"; text: string } | undefined>();
  const tool = connection.tools.find((t) => t.name === selected);

  const start = async (args: JsonObject) => {
    if (!tool) return;
    setBusy(true);
    setOutcome(undefined);
    try {
      const started = await callWatcher<StartOutcome>("startTask", [tool.name, args]);
      setOutcome({ kind: started.kind, text: started.text });
    } catch (error) {
      setOutcome({ kind: "error", text: `The page's agent did not answer (${errorText(error)}). Start it again.` });
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel">
      <h2>{heading}</h2>
      <p className="muted small">
        {connection.tools.length} tools from tools/list.{" "}
        <button type="button" className="link" onClick={() => void callWatcher("listTools")}>
          List them again
        </button>
      </p>
      <ul className="tools">
        {connection.tools.map((t) => (
          <li key={t.name}>
            <button
              type="button"
              className={t.name === selected ? "tool selected" : "tool"}
              onClick={() => {
                setSelected(t.name);
                setOutcome(undefined);
              }}
              data-testid={`tool-${t.name}`}
            >
              {t.title ?? t.name}
            </button>
            {taskSupport(t) && <span className="badge">task: {taskSupport(t)}</span>}
            <span className="muted"> {t.description}</span>
          </li>
        ))}
      </ul>
      {tool && (
        <div className="start">
          <h3>{tool.name}</h3>
          <SchemaForm
            key={tool.name}
            schema={tool.inputSchema}
            idPrefix="arg"
            submitLabel={taskSupport(tool) ? "Start task" : "Call tool"}
            busy={busy}
            onSubmit={start}
            fileChoices={fileChoices}
          />
        </div>
      )}
      {outcome && (
        <p className={outcome.kind === "error" ? "error" : "ok"} role="status" data-testid="start-outcome">
          {outcome.text}
        </p>
      )}
    </section>
  );
}
