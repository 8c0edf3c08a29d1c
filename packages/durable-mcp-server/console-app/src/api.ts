// The console's one way to the operator API: same origin, JSON, the operator token (when one is needed) as a Bearer
// header. The token is kept in sessionStorage only: it goes when the tab closes and is never written elsewhere.

const meta = document.querySelector<HTMLMetaElement>('meta[name="durable-mcp-operator"]');
/** Where the operator API is mounted, as serveConsole told the page. */
export const OPERATOR_PATH = meta?.content || "/operator";
const TOKEN_KEY = "durable-mcp-operator-token";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" };
  const bearer = token.get();
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${OPERATOR_PATH}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    credentials: "same-origin",
  });
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: a proxy's page or the Worker's own 404; reported below by status.
  }
  if (!response.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiError(response.status, error?.code ?? "http_error", error?.message ?? `HTTP ${response.status}`);
  }
  return body as T;
}

/** What GET /operator answers. */
export interface OperatorInfo {
  operator: string;
  catalog: "on" | "off";
  /** The per-task actions the server answers; an older server lists none and answers cancel. */
  actions?: string[];
  limits: { maxPageSize: number; maxBulkTasks: number };
}

/** A catalog row as the operator API shows it. */
export interface TaskRow {
  taskId: string;
  tool: string;
  principal: string;
  status: string;
  statusMessage: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  currentStep: string | null;
  stepState: string | null;
  attempts: number;
  retries: number;
  errorCode: string | null;
  tags: Record<string, string>;
  reasons?: string[];
}

export interface AuditEntry {
  seq: number;
  at: string;
  actor: string;
  action: string;
  target: Record<string, unknown>;
  taskIds: string[];
  outcome: Record<string, unknown>;
}

export const FINAL = new Set(["completed", "failed", "cancelled"]);
export const STATUSES = ["working", "input_required", "completed", "failed", "cancelled"] as const;

/**
 * Whether an action applies to a task in `status`: cancel, pause and resume to live ones (a paused task reads
 * `working`, so both pause and resume are offered there), retry to final ones; restart is offered on a final task's
 * step rows, with the step, not here. An action this console does not know is offered everywhere: the server decides.
 */
export function appliesTo(action: string, status: string): boolean {
  if (action === "cancel" || action === "pause" || action === "resume") return !FINAL.has(status);
  if (action === "retry") return FINAL.has(status);
  if (action === "restart") return false;
  return true;
}

export const ACTION_LABEL: Record<string, string> = {
  cancel: "Cancel",
  pause: "Pause",
  resume: "Resume",
  retry: "Retry",
  restart: "Restart",
};
export const actionLabel = (action: string) => ACTION_LABEL[action] ?? action[0]!.toUpperCase() + action.slice(1);

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const [big, bigUnit, small, smallUnit] =
    ms < 3_600_000
      ? [Math.floor(ms / 60_000), "m", Math.round((ms % 60_000) / 1000), "s"]
      : [Math.floor(ms / 3_600_000), "h", Math.round((ms % 3_600_000) / 60_000), "m"];
  return small === 0 ? `${big} ${bigUnit}` : `${big} ${bigUnit} ${small} ${smallUnit}`;
}

export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return `${date.toLocaleDateString(undefined, { month: "short", day: "numeric" })} ${date.toLocaleTimeString(undefined, { hour12: false })}`;
}

/** One limit key as GET /operator/limits shows it (the server's LimiterStatus with its key). */
export interface LimitRow {
  key: string;
  limit: number | null;
  inUse: number;
  queued: number;
  waits: number;
  oldestWaitMs: number | null;
  windowCount: number | null;
  rateWaiting: number;
}
