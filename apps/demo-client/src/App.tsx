// The task page: connect to an MCP server, upload files (tus, sha256 checked), start a tool as a task from a form
// generated from its input schema, follow it live, answer its questions, cancel it, download the files it wrote
// (sha256 checked); `/task/<id>` adds the task's raw JSON-RPC log. The MCP client is this session's TaskWatcher
// agent (src/watcher.ts): the page shows the state it pushes and acts through its callable methods.
import { createContext, useContext, useEffect, useState, type MouseEvent, type ReactNode } from "react";
import {
  FINAL_STATUSES,
  progressOf,
  timelineOf,
  resultText,
  taskSupport,
  TASKS_EXTENSION,
  type JsonObject,
  type LogEntry,
  type TaskSnapshot,
} from "../shared/mcp.ts";
import { fileLinksOf, formatBytes, useUploads } from "./files.ts";
import { FileDownloads, UploadPanel } from "./FileViews.tsx";
import { SchemaForm, type FileChoice } from "./SchemaForm.tsx";
import type { Connection, StartOutcome, TaskRecord, TaskView } from "../shared/watcher-state.ts";
import { callWatcher, useSession, useWatcher, type Watcher } from "./watcher.ts";
import type { SessionInfo } from "../shared/watcher-state.ts";

const defaultServer = () => `${location.origin}/mcp`;
const WatcherContext = createContext<Watcher | undefined>(undefined);

function useWatcherState(): Watcher {
  const watcher = useContext(WatcherContext);
  if (!watcher) throw new Error("useWatcherState outside <App>");
  return watcher;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function usePath(): [string, (path: string) => void] {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);
  const go = (next: string) => {
    history.pushState(null, "", next);
    setPath(next);
    scrollTo(0, 0);
  };
  return [path, go];
}

function Link({ to, go, children }: { to: string; go: (path: string) => void; children: ReactNode }) {
  const click = (event: MouseEvent) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    go(to);
  };
  return (
    <a href={to} onClick={click}>
      {children}
    </a>
  );
}

function Header({ go, children }: { go: (path: string) => void; children: ReactNode }) {
  return (
    <header>
      <h1>
        <Link to="/" go={go}>
          durable-mcp-server · tasks
        </Link>
      </h1>
      <p className="muted">
        This page's MCP client is an agent (a Durable Object of this Worker): it starts tools as tasks (MCP Tasks
        extension, protocol 2026-07-28) and follows them with tasks/get, also while no page is open.
      </p>
      {children}
    </header>
  );
}

export function App() {
  const [path, go] = usePath();
  const opened = useSession();
  if (opened.state === "open") return <SessionPage path={path} go={go} session={opened.session} />;
  return (
    <main>
      <Header go={go}>
        <p className={opened.problem ? "error small" : "muted small"} data-testid="agent-status" role="status">
          {opened.problem ? `No session with the page's agent: ${opened.problem}` : "Opening this browser's session…"}
        </p>
      </Header>
    </main>
  );
}

function SessionPage({ path, go, session }: { path: string; go: (path: string) => void; session: SessionInfo }) {
  const watcher = useWatcher(session);
  const match = /^\/task\/([^/]+)\/?$/.exec(path);
  return (
    <WatcherContext.Provider value={watcher}>
      <main>
        <Header go={go}>
          <p className={watcher.online ? "muted small" : "warning small"} data-testid="agent-status">
            {watcher.online ? "Agent connected" : "Agent reconnecting…"} · agent{" "}
            <code data-testid="agent-name">{session.name}</code>
          </p>
        </Header>
        {match ? <TaskPage taskId={decodeURIComponent(match[1] ?? "")} go={go} /> : <Home go={go} />}
      </main>
    </WatcherContext.Provider>
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Connecting

function Home({ go }: { go: (path: string) => void }) {
  const { state, session } = useWatcherState();
  const { connection } = state;
  const { servers } = session;
  // The choice follows the agent's server URL until another is picked. Only the servers WATCHER_SERVERS lists are
  // offered: the agent refuses any other.
  const [edited, setEdited] = useState<string | undefined>();
  const known = state.serverUrl !== undefined && servers.includes(state.serverUrl) ? state.serverUrl : undefined;
  const url = edited ?? known ?? servers[0] ?? "";
  const own = servers.includes(defaultServer()) ? defaultServer() : undefined;
  const [token, setToken] = useState("");
  const [problem, setProblem] = useState<string | undefined>();
  const uploadRecords = useUploads().all();
  const filesServer =
    connection.state === "connected" && connection.tools.some((t) => t.name === "file_upload_url")
      ? connection.url
      : undefined;
  // The upload panel shows for a server with file tools, and for uploads of earlier visits (one a reload interrupted).
  const showFiles = filesServer !== undefined || uploadRecords.length > 0;
  const numbered = (n: number, title: string) => `${showFiles ? n + 1 : n}. ${title}`;

  const connect = async (target: string) => {
    setEdited(target);
    setProblem(undefined);
    try {
      // An empty token field keeps the token the agent holds for this URL.
      await callWatcher<Connection>("connectTo", token.trim() ? [target, token.trim()] : [target]);
      setEdited(undefined);
      setToken("");
    } catch (error) {
      setProblem(`The page's agent did not answer (${errorText(error)}). Try again once it is connected.`);
    }
  };

  return (
    <>
      <section className="panel">
        <h2>1. Connect</h2>
        <form
          className="connect"
          onSubmit={(event) => {
            event.preventDefault();
            void connect(url.trim());
          }}
        >
          <label htmlFor="server-url">MCP server</label>
          <select id="server-url" value={url} onChange={(e) => setEdited(e.target.value)}>
            {servers.map((server) => (
              <option key={server} value={server}>
                {server}
              </option>
            ))}
          </select>
          <label htmlFor="server-token">Bearer token</label>
          <input
            id="server-token"
            type="password"
            autoComplete="off"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            placeholder={state.hasToken ? "kept by the agent for this URL" : "only for a server with AUTH_TOKENS"}
          />
          <button type="submit" disabled={connection.state === "connecting" || !url}>
            {connection.state === "connecting" ? "Connecting…" : "Connect"}
          </button>
        </form>
        {problem && (
          <p className="error" role="alert">
            {problem}
          </p>
        )}
        {connection.state === "failed" && (
          <div className="error" role="alert" data-testid="connect-error">
            <p>{connection.problem.message}</p>
            <p>Next: {connection.problem.next}</p>
            <div className="buttons">
              <button type="button" onClick={() => void connect(connection.url)}>
                Retry
              </button>
              {own !== undefined && connection.url !== own && (
                <button type="button" onClick={() => void connect(own)}>
                  Use this page's server ({own})
                </button>
              )}
            </div>
          </div>
        )}
        {connection.state === "connected" && (
          <p data-testid="connected">
            Connected to <strong>{connection.server}</strong> at <code>{connection.url}</code>
            {connection.tasks ? " (Tasks extension: yes)." : "."}
          </p>
        )}
        {connection.state === "connected" && !connection.tasks && (
          <div className="warning" role="alert" data-testid="no-tasks">
            <p>
              This server does not offer the MCP Tasks extension (server/discover has no capabilities.extensions["
              {TASKS_EXTENSION}"]), so nothing it runs becomes a task this page can follow.
            </p>
            <p>
              Next: its tools still answer below as plain calls; for tasks, connect to a server built with
              durable-mcp-server
              {own !== undefined && (
                <>
                  , such as{" "}
                  <button type="button" className="link" onClick={() => void connect(own)}>
                    this page's own
                  </button>
                </>
              )}
              .
            </p>
          </div>
        )}
      </section>
      {showFiles && <UploadPanel heading="2. Upload a file" serverUrl={filesServer} />}
      {connection.state === "connected" && <Tools connection={connection} heading={numbered(2, "Start a tool")} />}
      <TaskList go={go} heading={numbered(3, "Tasks this session's agent started")} />
    </>
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Starting a tool

function Tools({ connection, heading }: { connection: Extract<Connection, { state: "connected" }>; heading: string }) {
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

// ---------------------------------------------------------------------------------------------------------------
// Tasks

function TaskList({ go, heading }: { go: (path: string) => void; heading: string }) {
  const { tasks } = useWatcherState().state;
  return (
    <section className="panel">
      <h2>{heading}</h2>
      {tasks.length === 0 && (
        <p className="muted">None yet. This page's agent keeps them, and follows them while no page is open.</p>
      )}
      <div className="tasks">
        {tasks.map((view) => (
          <TaskCard key={view.record.taskId} view={view} go={go} />
        ))}
      </div>
    </section>
  );
}

function statusLabel(view: TaskView): string {
  const status = view.snapshot?.status ?? "unknown";
  if (view.record.cancelRequested && !FINAL_STATUSES.has(status)) return "cancellation requested";
  return status.replace("_", " ");
}

function TaskCard({ view, go, full }: { view: TaskView; go: (path: string) => void; full?: boolean }) {
  const { record, snapshot } = view;
  const [problem, setProblem] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const status = snapshot?.status;
  const final = status !== undefined && FINAL_STATUSES.has(status);
  const progress = snapshot ? progressOf(snapshot) : undefined;

  const cancel = async () => {
    setBusy(true);
    setProblem(undefined);
    try {
      await callWatcher("cancel", [record.taskId]);
    } catch (error) {
      setProblem(`Cancelling failed: ${error instanceof Error ? error.message : String(error)}. Try again.`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <article className={`task status-${status ?? "unknown"}`} data-testid="task-card" data-task-id={record.taskId}>
      <div className="task-head">
        <strong>{record.tool}</strong>
        <span className="status" data-testid="task-status">
          {statusLabel(view)}
        </span>
        {!full && (
          <Link to={`/task/${encodeURIComponent(record.taskId)}`} go={go}>
            details and JSON-RPC log
          </Link>
        )}
      </div>
      <div className="muted small">
        <code>{record.taskId}</code> · started {new Date(record.startedAt).toLocaleTimeString()} ·{" "}
        <code>{JSON.stringify(record.arguments)}</code>
      </div>
      {snapshot?.statusMessage && <p data-testid="task-message">{snapshot.statusMessage}</p>}
      {progress !== undefined && (
        <progress data-testid="task-progress" max={1} value={progress}>
          {Math.round(progress * 100)}%
        </progress>
      )}
      {view.gone && (
        <div className="error" data-testid="task-gone">
          <p>{view.gone}</p>
          <button type="button" onClick={() => void callWatcher("remove", [record.taskId])}>
            Remove from this list
          </button>
        </div>
      )}
      {view.pollError && !view.gone && (
        <p className="warning" data-testid="task-poll-error">
          Could not check on the task: {view.pollError} Retrying in a few seconds.
        </p>
      )}
      {status === "input_required" && snapshot?.inputRequests && (
        <InputRequests taskId={record.taskId} requests={snapshot.inputRequests} />
      )}
      {final && snapshot && <Outcome snapshot={snapshot} record={record} />}
      {!final && !view.gone && (
        <div className="buttons">
          <button
            type="button"
            onClick={() => void cancel()}
            disabled={busy || record.cancelRequested}
            data-testid="cancel"
          >
            {record.cancelRequested ? "Cancellation requested" : "Cancel task"}
          </button>
        </div>
      )}
      {final && (
        <div className="buttons">
          <button type="button" className="link" onClick={() => void callWatcher("remove", [record.taskId])}>
            Remove from this list
          </button>
        </div>
      )}
      {problem && <p className="error">{problem}</p>}
    </article>
  );
}

function Outcome({ snapshot, record }: { snapshot: TaskSnapshot; record: TaskRecord }) {
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
        {envelope && typeof envelope.recoveryHint === "string" && <p>Next: {envelope.recoveryHint}</p>}
      </div>
      <FileDownloads links={fileLinksOf(result)} serverUrl={record.serverUrl} taskId={record.taskId} />
    </>
  );
}

type InputRequest = { method: string; params?: JsonObject };

function InputRequests({ taskId, requests }: { taskId: string; requests: Record<string, InputRequest> }) {
  return (
    <div className="questions">
      {Object.entries(requests).map(([key, request]) => (
        <Question key={`${taskId}/${key}`} taskId={taskId} inputKey={key} request={request} />
      ))}
    </div>
  );
}

function Question({ taskId, inputKey, request }: { taskId: string; inputKey: string; request: InputRequest }) {
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<string | undefined>();
  const [problem, setProblem] = useState<string | undefined>();
  const params = request.params ?? {};
  const idPrefix = `answer-${inputKey.replace(/[^A-Za-z0-9_-]/g, "_")}`;

  const send = async (response: JsonObject) => {
    setBusy(true);
    setProblem(undefined);
    try {
      await callWatcher("answer", [taskId, { [inputKey]: response }]);
      setSent(String(response.action));
    } catch (error) {
      setProblem(
        `The answer was not delivered: ${error instanceof Error ? error.message : String(error)}. Send it again.`,
      );
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
      {problem && <p className="error">{problem}</p>}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------------------------
// One task, with its raw JSON-RPC log

function TaskPage({ taskId, go }: { taskId: string; go: (path: string) => void }) {
  const { state } = useWatcherState();
  const view = state.tasks.find((t) => t.record.taskId === taskId);
  const log = useTaskLog(taskId, view?.logSeq);
  if (!state.synced) return <p className="muted">Loading this session's tasks from its agent…</p>;
  if (!view) {
    return (
      <section className="panel">
        <p className="error" data-testid="task-unknown">
          This page's agent has not started a task with id <code>{taskId}</code> (or it was removed from the list).
        </p>
        <p>
          Next:{" "}
          <Link to="/" go={go}>
            go back to the task list
          </Link>
          .
        </p>
      </section>
    );
  }
  return (
    <>
      <p>
        <Link to="/" go={go}>
          ← all tasks
        </Link>
      </p>
      <section className="panel">
        <h2>Task {taskId}</h2>
        <TaskCard view={view} go={go} full />
      </section>
      <StepTimeline view={view} />
      <section className="panel">
        <h2>Raw JSON-RPC log ({log?.length ?? "loading"})</h2>
        <p className="muted small">Every request the page's agent sent for the task and what came back, newest last.</p>
        {log === undefined ? (
          <p className="muted">Loading the log from the agent…</p>
        ) : (
          <ol className="log" data-testid="rpc-log">
            {log.map((entry, index) => (
              <li key={index}>
                <div className="muted small">
                  {entry.at} · POST {entry.url}
                  {entry.inProcess ? " (in-process)" : ""} · {entry.request.method}
                  {entry.httpStatus !== undefined ? ` · HTTP ${entry.httpStatus}` : ""}
                </div>
                <pre>→ {JSON.stringify(entry.request)}</pre>
                {entry.related?.map((message, i) => (
                  <pre key={i}>⇠ {JSON.stringify(message)}</pre>
                ))}
                {entry.response && <pre>← {JSON.stringify(entry.response)}</pre>}
                {entry.failure && <pre className="error">✗ {entry.failure}</pre>}
              </li>
            ))}
          </ol>
        )}
      </section>
    </>
  );
}

/** The task's steps as its server journaled them: name, kind, state, attempts and how long each took. */
function StepTimeline({ view }: { view: TaskView }) {
  const timeline = view.snapshot ? timelineOf(view.snapshot) : undefined;
  return (
    <section className="panel">
      <h2>Step timeline</h2>
      {!timeline ? (
        <p className="muted">The server sent no step timeline for this task (only durable-mcp-server does).</p>
      ) : (
        <>
          {timeline.total > timeline.steps.length && (
            <p className="muted small">
              The last {timeline.steps.length} of {timeline.total} steps.
            </p>
          )}
          <table className="timeline" data-testid="step-timeline">
            <thead>
              <tr>
                <th>step</th>
                <th>kind</th>
                <th>state</th>
                <th>attempts</th>
                <th>started</th>
                <th>duration</th>
              </tr>
            </thead>
            <tbody>
              {timeline.steps.map((step) => (
                <tr key={step.name} data-step={step.name} data-state={step.state} data-attempts={step.attempts}>
                  <td>{step.name}</td>
                  <td>{step.kind}</td>
                  <td>{step.state}</td>
                  <td>{step.kind === "do" ? step.attempts : "—"}</td>
                  <td>{step.startedAt ? new Date(step.startedAt).toLocaleTimeString() : "—"}</td>
                  <td>{step.durationMs === null ? "—" : formatDuration(step.durationMs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

function formatDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** The task's log from the agent, fetched again whenever the agent logs another exchange (`logSeq`). */
function useTaskLog(taskId: string, logSeq: number | undefined): LogEntry[] | undefined {
  const [log, setLog] = useState<LogEntry[] | undefined>();
  useEffect(() => {
    if (logSeq === undefined) return;
    let current = true;
    callWatcher<LogEntry[]>("log", [taskId]).then(
      (entries) => current && setLog(entries),
      () => {},
    );
    return () => {
      current = false;
    };
  }, [taskId, logSeq]);
  return log;
}
