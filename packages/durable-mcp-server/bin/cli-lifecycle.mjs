// The durable-mcp CLI's part-2 commands: tasks pause | resume | retry | restart, on task ids or by filter (--where) as
// a bulk job with a dry run and progress. What each does is the operator API's (docs/operations.md).
import { randomUUID } from "node:crypto";
import { call, CliError, EXIT, one, print, progressBar, whereOf } from "./cli-core.mjs";

const PAST = { pause: "paused", resume: "resumed", retry: "retried", restart: "restarted" };
const DOING = { pause: "pausing", resume: "resuming", retry: "retrying", restart: "restarting" };

/** `tasks <action> ID… [--from-step L]` or `tasks <action> --where f=v… [--from-step L] [--dry-run]`. */
export async function tasksAct(action, options, ids) {
  const fromStep = one(options, "from-step");
  if (action === "restart" && fromStep === undefined) {
    throw new CliError('tasks restart needs --from-step LABEL (a step name, or "name#n" for its n-th use)', EXIT.usage);
  }
  if (action !== "restart" && fromStep !== undefined)
    throw new CliError("--from-step is for tasks restart", EXIT.usage);
  if (options.where) {
    if (ids.length > 0) throw new CliError("give task ids or --where, not both", EXIT.usage);
    return bulk(action, options, fromStep);
  }
  if (ids.length === 0) throw new CliError(`tasks ${action} takes task ids, or --where field=value`, EXIT.usage);
  // One request id per invocation and task: the server makes one new task for it however often it is sent.
  const requestId = one(options, "request-id") ?? randomUUID();
  const results = [];
  let worst = EXIT.ok;
  for (const id of ids) {
    const body =
      action === "restart"
        ? { fromStep, requestId: `${requestId}:${id}` }
        : action === "retry"
          ? { requestId: `${requestId}:${id}` }
          : undefined;
    try {
      results.push(await call(options, "POST", `/tasks/${encodeURIComponent(id)}/${action}`, body ?? {}));
    } catch (error) {
      if (!(error instanceof CliError) || error.code === EXIT.unreachable || error.code === EXIT.auth) throw error;
      results.push({ taskId: id, error: error.message });
      worst = worst === EXIT.ok ? error.code : worst;
    }
  }
  print(options, { results }, () => results.map(line(action)).join("\n"));
  return worst;
}

function line(action) {
  return (r) => {
    if (r.error) return `${r.taskId}: ${r.error}`;
    if (r.newTaskId) return `${r.taskId}: ${PAST[action]} as ${r.newTaskId}${r.fromStep ? ` from ${r.fromStep}` : ""}`;
    return `${r.taskId}: ${r.changed === false ? `already ${PAST[action]}` : PAST[action]} (${r.status})`;
  };
}

async function bulk(action, options, fromStep) {
  const where = whereOf(options);
  const request = { action, where, ...(fromStep === undefined ? {} : { fromStep }) };
  if (options["dry-run"]) {
    const dry = await call(options, "POST", "/jobs", { ...request, dryRun: true });
    print(options, dry, () => `${dry.count} task(s) would be ${PAST[action]}; nothing was changed (dry run)`);
    return EXIT.ok;
  }
  let { job } = await call(options, "POST", "/jobs", request);
  const tty = process.stderr.isTTY && !options.json;
  const verb = DOING[action];
  while (job.state !== "done") {
    if (tty) process.stderr.write(`\r${verb} ${progressBar(job)}`);
    else if (!options.json) process.stderr.write(`${verb} ${progressBar(job)}\n`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    ({ job } = await call(options, "GET", `/jobs/${job.jobId}`));
  }
  if (tty) process.stderr.write(`\r${verb} ${progressBar(job)}\n`);
  print(
    options,
    { job },
    () => `job ${job.jobId}: ${PAST[action]} ${job.done} of ${job.total}${job.failed ? `, ${job.failed} failed` : ""}`,
  );
  return job.failed > 0 ? EXIT.partial : EXIT.ok;
}
