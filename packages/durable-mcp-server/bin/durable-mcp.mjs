#!/usr/bin/env node
// durable-mcp: the operator's command line over a durableMcp Worker's operator API (docs/operations.md).
// Plain Node ≥ 20 (global fetch), no dependency: it only speaks HTTP + JSON to `<url>/operator`.

import { limitsCommand } from "./limits.mjs";

const USAGE = `durable-mcp — operate a durable-mcp-server deployment (docs/operations.md)

Usage:
  durable-mcp tasks list [--status S] [--tool T] [--principal P] [--tag k=v]… [--since 1h] [--text Q]
                         [--sort -created|created|-updated|updated] [--limit N] [--all] [--json]
  durable-mcp tasks get ID [--json]
  durable-mcp tasks export ID              the task's history as JSON (the replay check's format)
  durable-mcp tasks cancel ID… [--json]
  durable-mcp tasks cancel --where field=value… [--dry-run] [--json]
  durable-mcp tasks stuck [--working-for 15m] [--input-for 24h] [--alarm-grace 1m] [--json]
  durable-mcp stats [--status S] [--tool T] [--principal P] [--tag k=v] [--since 1h] [--json]
  durable-mcp audit [--limit N] [--json]
  durable-mcp reconcile [--where field=value…] [--json]
  durable-mcp limits [--key K]… [--principal P]… [--json]   queue depth, slots in use and waits per limit key

Options:
  --url URL      the Worker (its /operator path is added unless the URL has a path); env DURABLE_MCP_URL
  --token TOKEN  the operator token; env DURABLE_MCP_OPERATOR_TOKEN (not needed on loopback under wrangler dev)
  --json         print the API's JSON, for scripts
  --where        a filter field: status, tool, principal, tag (k=v), createdAfter, createdBefore, updatedAfter,
                 updatedBefore, q; repeat it to combine fields; a bulk cancel needs at least one

Exit codes: 0 done; 1 the server refused or failed (4xx/5xx not below); 2 usage error; 3 not authorised (401/403);
4 not found (404); 5 the catalog is off (503); 6 a bulk cancel finished with failures; 7 could not reach the server.`;

const EXIT = { ok: 0, failed: 1, usage: 2, auth: 3, notFound: 4, catalogOff: 5, partial: 6, unreachable: 7 };

class CliError extends Error {
  constructor(message, code) {
    super(message);
    this.code = code;
  }
}

/** Splits argv into positionals and options; repeated options collect into arrays. */
function parseArgs(argv) {
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

const one = (options, name) => options[name]?.at(-1);

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

async function call(options, method, path, body) {
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
        : response.status === 404
          ? EXIT.notFound
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
function filterQuery(options) {
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
function whereOf(options) {
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

function table(rows, columns) {
  const cells = rows.map((row) => columns.map(([, get]) => String(get(row) ?? "-")));
  const widths = columns.map(([title], i) => Math.max(title.length, ...cells.map((cell) => cell[i].length)));
  const line = (values) =>
    values
      .map((value, i) => value.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  return [line(columns.map(([title]) => title)), ...cells.map(line)].join("\n");
}

const TASK_COLUMNS = [
  ["TASK", (t) => t.taskId],
  ["TOOL", (t) => t.tool],
  ["STATUS", (t) => t.status],
  ["PRINCIPAL", (t) => t.principal],
  ["AGE", (t) => age(t.createdAt)],
  ["STEP", (t) => t.currentStep],
  ["MESSAGE", (t) => (t.statusMessage ?? t.errorCode ?? "").slice(0, 48)],
];

function print(options, json, human) {
  process.stdout.write(`${options.json ? JSON.stringify(json, null, 2) : human()}\n`);
}

async function tasksList(options) {
  const query = filterQuery(options);
  if (one(options, "sort")) query.set("sort", one(options, "sort"));
  if (one(options, "limit")) query.set("limit", one(options, "limit"));
  const tasks = [];
  let cursor = null;
  do {
    if (cursor) query.set("cursor", cursor);
    const page = await call(options, "GET", `/tasks?${query}`);
    tasks.push(...page.tasks);
    cursor = options.all ? page.nextCursor : null;
    if (!options.all && page.nextCursor) tasks.nextCursor = page.nextCursor;
  } while (cursor);
  print(options, { tasks, nextCursor: tasks.nextCursor ?? null }, () =>
    tasks.length === 0
      ? "no tasks match"
      : table(tasks, TASK_COLUMNS) + (tasks.nextCursor ? "\n(more: --all, or narrow the filter)" : ""),
  );
}

async function tasksExport(options, ids) {
  if (ids.length !== 1) throw new CliError("tasks export takes one task id", EXIT.usage);
  const history = await call(options, "GET", `/tasks/${encodeURIComponent(ids[0])}/history`);
  // Always JSON: the file an author commits and replays with replayHistory (docs/testing.md).
  process.stdout.write(`${JSON.stringify(history, null, 2)}\n`);
}

async function tasksGet(options, ids) {
  if (ids.length !== 1) throw new CliError("tasks get takes one task id", EXIT.usage);
  const detail = await call(options, "GET", `/tasks/${encodeURIComponent(ids[0])}`);
  print(options, detail, () => {
    const task = detail.task;
    const steps = task._meta?.["durable-mcp-server/steps"]?.steps ?? [];
    const lines = [
      `task      ${task.taskId}`,
      `tool      ${detail.tool}`,
      `principal ${detail.principal}`,
      `status    ${task.status}${task.statusMessage ? ` — ${task.statusMessage}` : ""}`,
      `created   ${task.createdAt}`,
      `updated   ${task.lastUpdatedAt ?? "-"}`,
    ];
    if (detail.catalog?.tags && Object.keys(detail.catalog.tags).length > 0) {
      lines.push(
        `tags      ${Object.entries(detail.catalog.tags)
          .map(([k, v]) => `${k}=${v}`)
          .join(" ")}`,
      );
    }
    if (steps.length > 0) {
      lines.push(
        "",
        table(steps, [
          ["STEP", (s) => (s.occurrence > 1 ? `${s.name}#${s.occurrence}` : s.name)],
          ["KIND", (s) => s.kind],
          ["STATE", (s) => s.state],
          ["ATTEMPTS", (s) => s.attempts],
          ["MS", (s) => s.durationMs],
        ]),
      );
    }
    return lines.join("\n");
  });
}

function progressBar(job) {
  const width = 30;
  const processed = job.done + job.failed;
  const filled = job.total === 0 ? width : Math.round((processed / job.total) * width);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${processed}/${job.total}${job.failed ? ` (${job.failed} failed)` : ""}`;
}

async function tasksCancel(options, ids) {
  if (options.where) {
    if (ids.length > 0) throw new CliError("give task ids or --where, not both", EXIT.usage);
    const where = whereOf(options);
    if (options["dry-run"]) {
      const dry = await call(options, "POST", "/cancellations", { where, dryRun: true });
      print(options, dry, () => `${dry.count} live task(s) match; nothing was cancelled (dry run)`);
      return EXIT.ok;
    }
    let { job } = await call(options, "POST", "/cancellations", { where });
    const tty = process.stderr.isTTY && !options.json;
    while (job.state !== "done") {
      if (tty) process.stderr.write(`\rcancelling ${progressBar(job)}`);
      else if (!options.json) process.stderr.write(`cancelling ${progressBar(job)}\n`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      ({ job } = await call(options, "GET", `/cancellations/${job.jobId}`));
    }
    if (tty) process.stderr.write(`\rcancelling ${progressBar(job)}\n`);
    print(
      options,
      { job },
      () => `job ${job.jobId}: cancelled ${job.done} of ${job.total}${job.failed ? `, ${job.failed} failed` : ""}`,
    );
    return job.failed > 0 ? EXIT.partial : EXIT.ok;
  }
  if (ids.length === 0) throw new CliError("tasks cancel takes task ids, or --where field=value", EXIT.usage);
  const results = [];
  let worst = EXIT.ok;
  for (const id of ids) {
    try {
      results.push(await call(options, "POST", `/tasks/${encodeURIComponent(id)}/cancel`));
    } catch (error) {
      if (!(error instanceof CliError) || error.code === EXIT.unreachable || error.code === EXIT.auth) throw error;
      results.push({ taskId: id, error: error.message });
      worst = worst === EXIT.ok ? error.code : worst;
    }
  }
  print(options, { results }, () =>
    results.map((r) => (r.error ? `${r.taskId}: ${r.error}` : `${r.taskId}: ${r.status}`)).join("\n"),
  );
  return worst;
}

async function tasksStuck(options) {
  const query = new URLSearchParams();
  if (one(options, "working-for")) query.set("workingFor", one(options, "working-for"));
  if (one(options, "input-for")) query.set("inputFor", one(options, "input-for"));
  if (one(options, "alarm-grace")) query.set("alarmGrace", one(options, "alarm-grace"));
  if (one(options, "limit")) query.set("limit", one(options, "limit"));
  const stuck = await call(options, "GET", `/stuck?${query}`);
  print(options, stuck, () =>
    stuck.tasks.length === 0
      ? "no stuck tasks"
      : table(stuck.tasks, [
          ...TASK_COLUMNS.slice(0, 5),
          ["WHY", (t) => t.reasons.join(",")],
          ["STEP", (t) => t.currentStep],
        ]),
  );
}

async function stats(options) {
  const result = await call(options, "GET", `/stats?${filterQuery(options)}`);
  print(options, result, () => {
    const statuses = ["working", "input_required", "completed", "failed", "cancelled"];
    const tools = [...new Set(result.counts.map((c) => c.tool))];
    const rows = tools.map((tool) => ({
      tool,
      ...Object.fromEntries(
        statuses.map((s) => [s, result.counts.find((c) => c.tool === tool && c.status === s)?.count ?? 0]),
      ),
    }));
    rows.push({ tool: "total", ...Object.fromEntries(statuses.map((s) => [s, result.byStatus[s] ?? 0])) });
    return table(rows, [["TOOL", (r) => r.tool], ...statuses.map((s) => [s.toUpperCase(), (r) => r[s]])]);
  });
}

async function audit(options) {
  const query = new URLSearchParams();
  if (one(options, "limit")) query.set("limit", one(options, "limit"));
  const result = await call(options, "GET", `/audit?${query}`);
  print(options, result, () =>
    table(result.entries, [
      ["WHEN", (e) => e.at],
      ["WHO", (e) => e.actor],
      ["WHAT", (e) => e.action],
      ["TASKS", (e) => e.taskIds.length],
      ["TARGET", (e) => JSON.stringify(e.target).slice(0, 60)],
    ]),
  );
}

async function reconcile(options) {
  const where = whereOf(options);
  const result = await call(options, "POST", "/reconcile", Object.keys(where).length > 0 ? { where } : {});
  print(
    options,
    result,
    () => `checked ${result.checked}, refreshed ${result.refreshed}, removed ${result.removed}, swept ${result.swept}`,
  );
}

async function main(argv) {
  const { positionals, options } = parseArgs(argv);
  const [group, command, ...rest] = positionals;
  if (options.help || group === undefined || group === "help") {
    process.stdout.write(`${USAGE}\n`);
    return group === undefined && !options.help ? EXIT.usage : EXIT.ok;
  }
  if (group === "tasks") {
    switch (command) {
      case "list":
        return (await tasksList(options)) ?? EXIT.ok;
      case "get":
        return (await tasksGet(options, rest)) ?? EXIT.ok;
      case "export":
        return (await tasksExport(options, rest)) ?? EXIT.ok;
      case "cancel":
        return tasksCancel(options, rest);
      case "stuck":
        return (await tasksStuck(options)) ?? EXIT.ok;
    }
    throw new CliError(`unknown command: tasks ${command ?? ""}`.trim(), EXIT.usage);
  }
  if (command !== undefined) throw new CliError(`unexpected argument: ${command}`, EXIT.usage);
  if (group === "stats") return (await stats(options)) ?? EXIT.ok;
  if (group === "audit") return (await audit(options)) ?? EXIT.ok;
  if (group === "reconcile") return (await reconcile(options)) ?? EXIT.ok;
  if (group === "limits") return (await limitsCommand(options, { call, print, table })) ?? EXIT.ok;
  throw new CliError(`unknown command: ${group}`, EXIT.usage);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof CliError) {
      process.stderr.write(`durable-mcp: ${error.message}\n`);
      if (error.code === EXIT.usage) process.stderr.write("run durable-mcp --help for usage\n");
      process.exit(error.code);
    }
    process.stderr.write(`durable-mcp: ${error?.stack ?? error}\n`);
    process.exit(EXIT.failed);
  },
);
