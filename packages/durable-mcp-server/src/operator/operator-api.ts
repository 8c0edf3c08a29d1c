import { MAX_BULK_TASKS, MAX_OPERATOR_PAGE_SIZE } from "../limits.js";
import { serveLimits } from "./limits-route.js";
import { operatorOf, type Operator, type OperatorSettings } from "./operator-access.js";
import { errorResponse, jsonResponse, OperatorError } from "./operator-errors.js";
import { allowOnly, catalog, expect, noParams, type OperatorDeps } from "./operator-http.js";
import { audit, children, detail, history, listTasks, stats, stuck } from "./operator-reads.js";
import { serveMetrics } from "./operator-metrics.js";
import { actOnTask, readJobRoute, reconcile, startJob } from "./operator-writes.js";
import { BULK_ACTIONS, type BulkAction } from "./task-actions.js";

// The operator API (design/operations.md, docs/operations.md): HTTP + JSON under the operator path, authenticated
// apart from MCP callers. This module routes; the reads are operator-reads.ts, the actions operator-writes.ts.

export type { OperatorDeps };

const TASK_ROUTE = /^\/tasks\/([A-Za-z0-9_-]{1,128})(?:\/(cancel|pause|resume|retry|restart|history|children))?$/;
const JOB_ROUTE = /^\/(?:cancellations|jobs)\/([0-9a-f-]{36})$/;

export async function serveOperator<Env>(
  request: Request,
  env: Env,
  settings: OperatorSettings<Env>,
  deps: OperatorDeps,
): Promise<Response> {
  try {
    const operator = await operatorOf(request, env, settings);
    if (operator instanceof Response) return operator;
    const url = new URL(request.url);
    const route = url.pathname.slice(settings.path.length) || "/";
    return await route_(request, url, route, operator, deps);
  } catch (error) {
    if (error instanceof OperatorError) return errorResponse(error);
    console.error("durableMcp: operator request failed", {
      url: new URL(request.url).pathname,
      error: error instanceof Error ? error.stack : String(error),
    });
    return errorResponse(new OperatorError(500, "internal_error", "Internal error"));
  }
}

async function route_(
  request: Request,
  url: URL,
  route: string,
  operator: Operator,
  deps: OperatorDeps,
): Promise<Response> {
  const method = request.method;
  const get = method === "GET" || method === "HEAD";
  const post = method === "POST";
  const params = url.searchParams;
  switch (route) {
    case "/":
      expect(get, "GET");
      noParams(params);
      return jsonResponse({
        operator: operator.name,
        catalog: deps.db ? "on" : "off",
        // "driven": a BulkDriver runs bulk jobs to their end; "on-read": a job's next slice runs when it is read.
        jobs: deps.driver ? "driven" : "on-read",
        // The per-task actions answered below (POST /tasks/:id/<action>): the console offers exactly these.
        actions: BULK_ACTIONS,
        limits: { maxPageSize: MAX_OPERATOR_PAGE_SIZE, maxBulkTasks: MAX_BULK_TASKS },
      });
    case "/tasks":
      expect(get, "GET");
      return listTasks(params, deps);
    case "/stats":
      expect(get, "GET");
      return stats(params, deps);
    case "/metrics":
      expect(get, "GET");
      allowOnly(params, ["since", "bucket", "tool"]);
      return serveMetrics(params, catalog(deps));
    case "/stuck":
      expect(get, "GET");
      return stuck(params, deps);
    case "/audit":
      expect(get, "GET");
      return audit(params, deps);
    case "/cancellations":
    case "/jobs":
      expect(post, "POST");
      noParams(params);
      return startJob(request, route === "/cancellations" ? "cancel" : null, operator, deps);
    case "/reconcile":
      expect(post, "POST");
      noParams(params);
      return reconcile(request, operator, deps);
    case "/limits":
      expect(get, "GET");
      return jsonResponse(await serveLimits(params, deps.limits));
  }
  const job = JOB_ROUTE.exec(route);
  if (job) {
    expect(get, "GET");
    return readJobRoute(job[1]!, deps);
  }
  const task = TASK_ROUTE.exec(route);
  if (task) {
    const [, taskId, action] = task as unknown as [string, string, string | undefined];
    if (action === undefined || action === "history" || action === "children") {
      expect(get, "GET");
      allowOnly(params, ["principal"]);
      const read = action === "history" ? history : action === "children" ? children : detail;
      return read(taskId, params.get("principal"), deps);
    }
    expect(post, "POST");
    noParams(params);
    return actOnTask(request, taskId, action as BulkAction, operator, deps);
  }
  throw new OperatorError(404, "not_found", `no operator route ${route.slice(0, 100)}`);
}
