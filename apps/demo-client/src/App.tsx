// The task page: connect to an MCP server, upload files (tus, sha256 checked), start a tool as a task from a form
// generated from its input schema, follow it live, answer its questions, cancel it, download the files it wrote
// (sha256 checked); `/task/<id>` adds the task's raw JSON-RPC log. The MCP client is this session's TaskWatcher
// agent (src/watcher.ts): the page shows the state it pushes and acts through its callable methods.
//
// The parts: routes.ts (the two routes), pages/ (Home, TaskPage), components/ (one view or a small family each),
// files/ (uploads, downloads, formatting), forms/ (the generated forms), watcher.ts and agent-calls.ts (the page's
// side of the agent); shared/ (beside src/) holds what the page and the agent both use.
import { useEffect, useState } from "react";
import type { SessionInfo } from "../shared/watcher-state.ts";
import { Header } from "./components/Header.tsx";
import { UploadStore, UploadsContext } from "./files/upload.ts";
import { Home } from "./pages/Home.tsx";
import { TaskPage } from "./pages/TaskPage.tsx";
import { routeOf, usePath, type Go } from "./routes.ts";
import { useSession, useWatcher, WatcherContext } from "./watcher.ts";

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

function SessionPage({ path, go, session }: { path: string; go: Go; session: SessionInfo }) {
  const watcher = useWatcher(session);
  // The session's uploads (kept in localStorage across reloads), asking the server through the session's agent.
  const [uploads] = useState(() => new UploadStore(watcher.tool));
  useEffect(() => uploads.checkInterrupted(), [uploads]);
  const route = routeOf(path);
  return (
    <WatcherContext.Provider value={watcher}>
      <UploadsContext.Provider value={uploads}>
        <main>
          <Header go={go}>
            <p className={watcher.online ? "muted small" : "warning small"} data-testid="agent-status">
              {watcher.online ? "Agent connected" : "Agent reconnecting…"} · agent{" "}
              <code data-testid="agent-name">{session.name}</code>
            </p>
          </Header>
          {route.page === "task" ? <TaskPage taskId={route.taskId} go={go} /> : <Home go={go} />}
        </main>
      </UploadsContext.Provider>
    </WatcherContext.Provider>
  );
}
