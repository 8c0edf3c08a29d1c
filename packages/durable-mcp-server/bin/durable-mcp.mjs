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
  durable-mcp tasks children ID [--json]   the child tasks it started (step.invoke) and their states
  durable-mcp tasks cancel ID… [--json]
  durable-mcp tasks cancel --where field=value… [--dry-run] [--json]
  durable-mcp tasks pause|resume ID… [--json]          pause at the next step boundary; resume where it stopped
  durable-mcp tasks retry ID… [--json]                 a new task with the same input (the original must be final)
  durable-mcp tasks restart ID… --from-step LABEL [--json]
                                           a new task that keeps the journal before step LABEL (name, or name#n)
  durable-mcp tasks pause|resume|retry|restart --where field=value… [--from-step LABEL] [--dry-run] [--json]
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
                 updatedBefore, q; repeat it to combine fields; a bulk action needs at least one
  --request-id   keys the new task of a retry or restart, so that running the command again makes no second one

Exit codes: 0 done; 1 the server refused or failed (4xx/5xx not below); 2 usage error; 3 not authorised (401/403);
4 not found or purged (404, 410); 5 the catalog is off (503); 6 a bulk action finished with failures; 7 could not
reach the server; 8 the task's state refused the action (409: pause of a final task, restart of a running one).`;

import { call, CliError, EXIT, parseArgs, print, table } from "./cli-core.mjs";
import {
  audit,
  reconcile,
  stats,
  tasksCancel,
  tasksChildren,
  tasksExport,
  tasksGet,
  tasksList,
  tasksStuck,
} from "./cli-actions.mjs";
import { tasksAct } from "./cli-lifecycle.mjs";

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
      case "children":
        return (await tasksChildren(options, rest)) ?? EXIT.ok;
      case "cancel":
        return tasksCancel(options, rest);
      case "stuck":
        return (await tasksStuck(options)) ?? EXIT.ok;
      case "pause":
      case "resume":
      case "retry":
      case "restart":
        return tasksAct(command, options, rest);
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
