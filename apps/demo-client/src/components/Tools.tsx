// "Start a task": the connected server's tools (tools/list), task tools first with their title and one-line
// purpose, plain tools after them, file plumbing (file_*) grouped as advanced; the chosen tool's form, generated from
// its input schema (file fields offer this server's ready uploads), scrolls into view and takes focus. The agent
// starts it, as a task when the tool supports that.
import { useEffect, useRef, useState } from "react";
import { errorText, taskSupport, type JsonObject, type ToolInfo } from "../../shared/mcp.ts";
import type { Connection, StartOutcome } from "../../shared/watcher-state.ts";
import { formatBytes } from "../files/format.ts";
import { useUploads } from "../files/upload.ts";
import { useWatcherState } from "../watcher.ts";
import { SchemaForm, type FileChoice } from "./SchemaForm.tsx";

/** The first sentence of a description: the one-line purpose. */
export function purposeOf(tool: ToolInfo): string {
  const text = tool.description?.trim() ?? "";
  const end = text.search(/[.!?](\s|$)/);
  return end === -1 ? text : text.slice(0, end + 1);
}

const isPlumbing = (tool: ToolInfo) => tool.name.startsWith("file_");

export function Tools({
  connection,
  heading,
}: {
  connection: Extract<Connection, { state: "connected" }>;
  heading: string;
}) {
  const { call } = useWatcherState();
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
  const formBox = useRef<HTMLDivElement>(null);

  // The chosen tool's form opens in view, its first field focused: choosing must visibly do something.
  useEffect(() => {
    const box = formBox.current;
    if (!selected || !box) return;
    box.scrollIntoView({ block: "start", behavior: "instant" });
    const first = box.querySelector<HTMLElement>("input, select, textarea, button[type=submit]");
    first?.focus({ preventScroll: true });
  }, [selected]);

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

  const tasks = connection.tools.filter((t) => taskSupport(t) !== undefined && !isPlumbing(t));
  const plain = connection.tools.filter((t) => taskSupport(t) === undefined && !isPlumbing(t));
  const plumbing = connection.tools.filter(isPlumbing);
  const choose = (name: string) => {
    setSelected(name);
    setOutcome(undefined);
  };
  const list = (tools: ToolInfo[]) => (
    <ul className="tools">
      {tools.map((t) => (
        <li key={t.name}>
          <button
            type="button"
            className={t.name === selected ? "tool selected" : "tool"}
            aria-pressed={t.name === selected}
            onClick={() => choose(t.name)}
            data-testid={`tool-${t.name}`}
          >
            <span className="tool-title">{t.title ?? t.name}</span>
            <span className="tool-purpose">{purposeOf(t) || t.name}</span>
          </button>
        </li>
      ))}
    </ul>
  );

  return (
    <section className="panel" aria-labelledby="tools-heading">
      <h2 id="tools-heading">{heading}</h2>
      {tasks.length > 0 && (
        <>
          <h3 className="group">Tasks: durable, resumable, followed live</h3>
          {list(tasks)}
        </>
      )}
      {plain.length > 0 && (
        <>
          <h3 className="group">Plain tools: answer at once</h3>
          {list(plain)}
        </>
      )}
      {plumbing.length > 0 && (
        <details className="advanced" open={tool !== undefined && isPlumbing(tool)}>
          <summary>Advanced: file plumbing ({plumbing.length} tools the page uses for uploads and downloads)</summary>
          {list(plumbing)}
        </details>
      )}
      <p className="muted small">
        {connection.tools.length} tools from tools/list.{" "}
        <button type="button" className="link" onClick={() => void call("listTools")}>
          List them again
        </button>
      </p>
      {tool && (
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
      )}
      {outcome && (
        <p className={outcome.kind === "error" ? "error" : "ok"} role="status" data-testid="start-outcome">
          {outcome.text}
        </p>
      )}
    </section>
  );
}
