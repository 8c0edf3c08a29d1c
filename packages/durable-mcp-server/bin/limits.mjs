// durable-mcp limits: queue depth, slots in use and waits per limit key, from GET <operator>/limits.

/** Runs `durable-mcp limits [--key K]… [--principal P]… [--json]`; `call`, `print` and `table` are the CLI's own. */
export async function limitsCommand(options, { call, print, table }) {
  const query = new URLSearchParams();
  for (const key of options.key ?? []) query.append("key", key);
  for (const principal of options.principal ?? []) query.append("principal", principal);
  const result = await call(options, "GET", `/limits${query.size > 0 ? `?${query}` : ""}`);
  print(options, result, () =>
    result.limiter === "off"
      ? "no TaskLimiter is bound: no limits apply"
      : table(result.limits, [
          ["KEY", (l) => l.key],
          ["LIMIT", (l) => l.limit ?? "-"],
          ["IN USE", (l) => l.inUse],
          ["QUEUED", (l) => l.queued],
          ["WAITS", (l) => l.waits],
          ["OLDEST WAIT", (l) => (l.oldestWaitMs === null ? "-" : `${Math.round(l.oldestWaitMs / 1000)}s`)],
          ["RATE WINDOW", (l) => l.windowCount ?? "-"],
          ["RATE WAITING", (l) => l.rateWaiting ?? "-"],
        ]),
  );
}
