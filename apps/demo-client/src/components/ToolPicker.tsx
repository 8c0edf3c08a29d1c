// The connected server's tools as "Start a task" lists them (src/tools.ts): task tools first with their title and
// one-line purpose, plain tools after them, file plumbing in a closed "Advanced" group (open while one of its tools
// is chosen), and how many tools/list gave, with a button to list them again.
import type { ToolInfo } from "../../shared/mcp.ts";
import { isPlumbing, purposeOf, toolGroupsOf } from "../tools.ts";
import { useWatcherState } from "../watcher.ts";

export interface ToolPickerProps {
  tools: ToolInfo[];
  selected: string | undefined;
  choose: (name: string) => void;
}

export function ToolPicker({ tools, selected, choose }: ToolPickerProps) {
  const { call } = useWatcherState();
  const { tasks, plain, plumbing } = toolGroupsOf(tools);
  const chosen = tools.find((t) => t.name === selected);
  return (
    <>
      {tasks.length > 0 && (
        <>
          <h3 className="group">Tasks: durable, resumable, followed live</h3>
          <ToolList tools={tasks} selected={selected} choose={choose} />
        </>
      )}
      {plain.length > 0 && (
        <>
          <h3 className="group">Plain tools: answer at once</h3>
          <ToolList tools={plain} selected={selected} choose={choose} />
        </>
      )}
      {plumbing.length > 0 && (
        <details className="advanced" open={chosen !== undefined && isPlumbing(chosen)}>
          <summary>Advanced: file plumbing ({plumbing.length} tools the page uses for uploads and downloads)</summary>
          <ToolList tools={plumbing} selected={selected} choose={choose} />
        </details>
      )}
      <p className="muted small">
        {tools.length} tools from tools/list.{" "}
        <button type="button" className="link" onClick={() => void call("listTools")}>
          List them again
        </button>
      </p>
    </>
  );
}

function ToolList({ tools, selected, choose }: ToolPickerProps) {
  return (
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
}
