// The durable-mcp CLI's commands (bin/durable-mcp.mjs routes to them): each reads its options, calls the operator
// API (cli-core.mjs) and prints a table or, with --json, the API's JSON; the value returned is the exit code.
import {
  call,
  CliError,
  EXIT,
  filterQuery,
  one,
  print,
  progressBar,
  table,
  TASK_COLUMNS,
  whereOf,
} from "./cli-core.mjs";

export async function tasksList(options) {
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

export async function tasksExport(options, ids) {
  if (ids.length !== 1) throw new CliError("tasks export takes one task id", EXIT.usage);
  const history = await call(options, "GET", `/tasks/${encodeURIComponent(ids[0])}/history`);
  // Always JSON: the file an author commits and replays with replayHistory (docs/testing.md).
  process.stdout.write(`${JSON.stringify(history, null, 2)}\n`);
}

export async function tasksGet(options, ids) {
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

export async function tasksCancel(options, ids) {
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

export async function tasksStuck(options) {
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

export async function stats(options) {
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

export async function audit(options) {
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

export async function reconcile(options) {
  const where = whereOf(options);
  const result = await call(options, "POST", "/reconcile", Object.keys(where).length > 0 ? { where } : {});
  print(
    options,
    result,
    () => `checked ${result.checked}, refreshed ${result.refreshed}, removed ${result.removed}, swept ${result.swept}`,
  );
}
