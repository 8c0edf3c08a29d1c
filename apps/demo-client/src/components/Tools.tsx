// "Start a task": the connected server's tools (tools/list) as components/ToolPicker.tsx lists them; the chosen
// tool's form, generated from its input schema (file fields offer this server's ready uploads), scrolls into view
// and takes focus. The agent starts it, as a task when the tool supports that.
import { useEffect, useRef, useState } from "react";
import { errorText, taskSupport, type JsonObject, type ToolInfo } from "../../shared/mcp.ts";
import type { Connection, StartOutcome } from "../../shared/watcher-state.ts";
import { formatBytes } from "../files/format.ts";
import { useUploads } from "../files/upload.ts";
import { useWatcherState } from "../watcher.ts";
import type { FileChoice } from "./FileInput.tsx";
import { SchemaForm } from "./SchemaForm.tsx";
import { ToolPicker } from "./ToolPicker.tsx";

export function Tools({
  connection,
  heading,
}: {
  connection: Extract<Connection, { state: "connected" }>;
  heading: string;
}) {
  const { call } = useWatcherState();
  const [selected, setSelected] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ kind: "ok" | "error"; text: string } | undefined>();
  const tool = connection.tools.find((t) => t.name === selected);

  const start = async (args: JsonObject) => {
    if (!tool) return;
    setBusy(true);
    setOutcome(undefined);
    try {
      const started = await call<StartOutcome>("startTask", [tool.name, args]);
      setOutcome({ kind: started.kind, text: started.text });
    } catch (error) {
      setOutcome({ kind: "error", text: `The page's agent did not answer (${errorText(error)}). Start it again.` });
    } finally {
      setBusy(false);
    }
  };
  const choose = (name: string) => {
    setSelected(name);
    setOutcome(undefined);
  };

  return (
    <section className="panel" aria-labelledby="tools-heading">
      <h2 id="tools-heading">{heading}</h2>
      <ToolPicker tools={connection.tools} selected={selected} choose={choose} />
      {tool && <ToolForm tool={tool} serverUrl={connection.url} busy={busy} start={start} />}
      {outcome && (
        <p className={outcome.kind === "error" ? "error" : "ok"} role="status" data-testid="start-outcome">
          {outcome.text}
        </p>
      )}
    </section>
  );
}

/** The chosen tool's form; it opens in view, its first field focused: choosing must visibly do something. */
function ToolForm({
  tool,
  serverUrl,
  busy,
  start,
}: {
  tool: ToolInfo;
  serverUrl: string;
  busy: boolean;
  start: (args: JsonObject) => Promise<void>;
}) {
  const fileChoices: FileChoice[] = useUploads()
    .ready(serverUrl)
    .map((upload) => ({
      handle: upload.handle ?? upload.id,
      label: `${upload.name} (${formatBytes(upload.size)}, ${new Date(upload.startedAt).toLocaleTimeString()}) · ${upload.handle}`,
    }));
  const formBox = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const box = formBox.current;
    if (!box) return;
    box.scrollIntoView({ block: "start", behavior: "instant" });
    const first = box.querySelector<HTMLElement>("input, select, textarea, button[type=submit]");
    first?.focus({ preventScroll: true });
  }, [tool.name]);

  return (
    <div className="start" ref={formBox} data-testid="tool-form">
      <h3>{tool.title ?? tool.name}</h3>
      {tool.description && <p className="muted small">{tool.description}</p>}
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
  );
}
