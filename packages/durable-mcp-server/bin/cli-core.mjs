// The durable-mcp CLI's plumbing (bin/durable-mcp.mjs is the entry): arguments, the HTTP call to the operator API
// with its exit codes, filters, and table output. Plain Node ≥ 20, no dependency.

export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  catalogOff: 5,
  partial: 6,
  unreachable: 7,
  conflict: 8,
};

export class CliError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

/** Splits argv into positionals and options; repeated options collect into arrays. */
export function parseArgs(argv) {
  const flags = new Set(["json", "all", "dry-run", "help", "yes"]);
  const positionals = [];
  const options = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) {
      positionals.push(arg);
      continue;
    }
    let [name, value] = arg.slice(2).split(/=(.*)/s, 2);
    if (flags.has(name)) {
      options[name] = true;
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new CliError(`--${name} needs a value`, EXIT.usage);
    }
    (options[name] ??= []).push(value);
  }
  return { positionals, options };
}

export const one = (options, name) => options[name]?.at(-1);

function baseUrl(options) {
  const given = one(options, "url") ?? process.env.DURABLE_MCP_URL;
  if (!given) throw new CliError("give --url (or set DURABLE_MCP_URL), e.g. --url http://127.0.0.1:8788", EXIT.usage);
  let url;
  try {
    url = new URL(given);
  } catch {
    throw new CliError(`--url ${given} is not a URL`, EXIT.usage);
  }
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/operator";
  return url.toString().replace(/\/+$/, "");
}

export async function call(options, method, path, body) {
  const token = one(options, "token") ?? process.env.DURABLE_MCP_OPERATOR_TOKEN;
  const headers = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let response;
  try {
    response = await fetch(`${baseUrl(options)}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new CliError(
      `could not reach ${baseUrl(options)}: ${error.cause?.message ?? error.message}`,
      EXIT.unreachable,
    );
  }
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!response.ok) {
    const error = json?.error;
    const message = error ? `${error.code}: ${error.message}` : `HTTP ${response.status} ${text.slice(0, 200)}`;
    const code =
      response.status === 401 || response.status === 403
        ? EXIT.auth
        : response.status === 404 || response.status === 410
          ? EXIT.notFound
          : response.status === 409
            ? EXIT.conflict
            : response.status === 503 && error?.code === "catalog_off"
              ? EXIT.catalogOff
              : EXIT.failed;
    throw new CliError(message, code);
  }
  if (json === undefined)
    throw new CliError(`the server answered something other than JSON: ${text.slice(0, 200)}`, EXIT.failed);
  return json;
}

/** The list/stats filter options as query parameters. */
export function filterQuery(options) {
  const query = new URLSearchParams();
  for (const value of options.status ?? []) query.append("status", value);
  for (const value of options.tool ?? []) query.append("tool", value);
  for (const value of options.principal ?? []) query.append("principal", value);
  for (const value of options.tag ?? []) query.append("tag", value);
  if (one(options, "since")) query.set("createdAfter", one(options, "since"));
  if (one(options, "until")) query.set("createdBefore", one(options, "until"));
  if (one(options, "text")) query.set("q", one(options, "text"));
  return query;
}

/** `--where status=working --where tag=customer=acme` as a where object (repeated fields become arrays). */
export function whereOf(options) {
  const where = {};
  for (const pair of options.where ?? []) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new CliError(`--where ${pair}: expected field=value`, EXIT.usage);
    const key = pair.slice(0, at);
    const value = pair.slice(at + 1);
    where[key] = where[key] === undefined ? value : [].concat(where[key], value);
  }
  return where;
}

function age(iso) {
  if (!iso) return "-";
  const ms = Date.now() - Date.parse(iso);
  if (ms < 60_000) return `${Math.max(0, Math.round(ms / 1000))}s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)}m`;
  if (ms < 86_400_000) return `${Math.round(ms / 3_600_000)}h`;
  return `${Math.round(ms / 86_400_000)}d`;
}

export function table(rows, columns) {
  const cells = rows.map((row) => columns.map(([, get]) => String(get(row) ?? "-")));
  const widths = columns.map(([title], i) => Math.max(title.length, ...cells.map((cell) => cell[i].length)));
  const line = (values) =>
    values
      .map((value, i) => value.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(columns.map(([title]) => title)), ...cells.map(line)].join("\n");
}

export const TASK_COLUMNS = [
  ["TASK", (t) => t.taskId],
  ["TOOL", (t) => t.tool],
  ["STATUS", (t) => t.status],
  ["PRINCIPAL", (t) => t.principal],
  ["AGE", (t) => age(t.createdAt)],
  ["STEP", (t) => t.currentStep],
  ["MESSAGE", (t) => (t.statusMessage ?? t.errorCode ?? "").slice(0, 48)],
];

export function print(options, json, human) {
  process.stdout.write(`${options.json ? JSON.stringify(json, null, 2) : human()}\n`);
}

export function progressBar(job) {
  const width = 30;
  const processed = job.done + job.failed;
  const filled = job.total === 0 ? width : Math.round((processed / job.total) * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${processed}/${job.total}${job.failed ? ` (${job.failed} failed)` : ""}`;
}
