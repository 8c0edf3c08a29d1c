// The home page: connect, upload a file (for a server with file tools, or uploads of earlier visits), start a tool,
// and the tasks this session's agent started.
import { ConnectPanel } from "../components/ConnectPanel.tsx";
import { TaskList } from "../components/TaskList.tsx";
import { Tools } from "../components/Tools.tsx";
import { UploadPanel } from "../components/UploadPanel.tsx";
import { useUploads } from "../files/upload.ts";
import type { Go } from "../routes.ts";
import { useWatcherState } from "../watcher.ts";

export function Home({ go }: { go: Go }) {
  const { connection } = useWatcherState().state;
  const uploadRecords = useUploads().all();
  const filesServer =
    connection.state === "connected" && connection.tools.some((t) => t.name === "file_upload_url")
      ? connection.url
      : undefined;
  // The upload panel shows for a server with file tools, and for uploads of earlier visits (one a reload interrupted).
  const showFiles = filesServer !== undefined || uploadRecords.length > 0;

  return (
    <>
      <ConnectPanel />
      {showFiles && <UploadPanel heading="Upload a file" serverUrl={filesServer} />}
      {connection.state === "connected" && <Tools connection={connection} heading="Start a task" />}
      <TaskList go={go} heading="Your tasks" />
    </>
  );
}
