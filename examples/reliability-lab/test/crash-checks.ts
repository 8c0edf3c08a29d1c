// The crash suite's verdicts: what the counter's record of step executions (each tagged with the `wrangler dev`
// instance that ran it) and a task's final state must show after kills. Pure functions, so that
// crash-checks.test.ts can show each of them failing on a record that breaks the rule.
import { effectSteps, stepOrder, workValue, type LabJobArgs, type LabJobOutcome } from "../src/lab.ts";
import { stepOf, type Hit } from "./counter.ts";
import type { Task } from "@durable-mcp/test-harness";

/** plain: no question; answer: asks, and is answered; cancel: asks, and is cancelled while it waits. */
export type Role = "plain" | "answer" | "cancel";

/** What the checks need to know about one task of the suite. */
export interface CheckedJob {
  index: number;
  role: Role;
  args: LabJobArgs;
  /** The code the suite answers the question with. */
  code: string;
  taskId?: string;
  /** The last status the suite saw in each instance. */
  statusIn: Map<number, string>;
}

/** What the counter shows for one task, checked against what its job must have done. */
export interface Verdict {
  problems: string[];
  /** Executions of a step that repeat one cut short by a kill. */
  crashRepeats: number;
  /** Attempts journaled but killed before their body's effect reached the counter. */
  cutBeforeEffect: number;
}

export function judge(job: CheckedJob, view: Task, hits: Hit[]): Verdict {
  const problems: string[] = [];
  const say = (message: string) => problems.push(`task ${job.index} (${job.role}, ${job.taskId}): ${message}`);
  const order = effectSteps(job.args);
  const position = new Map(order.map((name, i) => [name, i]));
  const all = stepOrder(job.args);
  const afterQuestion = new Set(job.args.ask ? all.slice(all.indexOf("approve") + 1) : []);
  const failFirst = job.args.flaky?.failFirst ?? 0;
  /** An execution that fails on purpose: the next one is its retry, not a repeat. */
  const failsByDesign = (hit: Hit) => stepOf(hit) === "flaky" && hit.attempt <= failFirst;

  const expected = job.role === "cancel" ? "cancelled" : "completed";
  if (view.status !== expected) say(`ended ${view.status}, expected ${expected}: ${JSON.stringify(view)}`);
  let outcome: LabJobOutcome | undefined;
  if (expected === "completed" && view.status === "completed") {
    if (view.result?.isError) say(`completed with a tool error: ${JSON.stringify(view.result)}`);
    outcome = view.result?.structuredContent as LabJobOutcome | undefined;
    const values = Array.from({ length: job.args.steps }, (_, i) => workValue(job.args.salt, i));
    if (JSON.stringify(outcome?.values) !== JSON.stringify(values)) {
      say(`values ${JSON.stringify(outcome?.values)}, expected ${JSON.stringify(values)}`);
    }
    const answer = job.role === "answer" ? job.code : null;
    if (outcome?.answer !== answer)
      say(`answer ${JSON.stringify(outcome?.answer)}, expected ${JSON.stringify(answer)}`);
  }

  for (const hit of hits) if (!position.has(stepOf(hit))) say(`an execution of an unknown step "${stepOf(hit)}"`);
  // A step's idempotency key is journaled with its first attempt: every execution of it, in any instance, carries
  // the same one; different steps never share one, and none carries the task id.
  const keys = new Map<string, string>();
  for (const hit of hits) {
    const known = keys.get(stepOf(hit));
    if (known === undefined) keys.set(stepOf(hit), hit.key);
    else if (known !== hit.key) say(`"${stepOf(hit)}" ran with key ${hit.key} after ${known}: the step was re-keyed`);
    if (job.taskId && hit.key.includes(job.taskId)) say(`"${stepOf(hit)}" was handed a key with the task id`);
  }
  if (new Set(keys.values()).size !== keys.size) say(`steps share an idempotency key: ${JSON.stringify([...keys])}`);
  for (let i = 1; i < hits.length; i++) {
    const [before, now] = [hits[i - 1]!, hits[i]!];
    // Step bodies run in handler order, each after the previous one finished: going back means a step that had
    // finished (a later one had started) ran again.
    if (position.get(stepOf(now))! < position.get(stepOf(before))!) {
      say(`"${stepOf(now)}" ran again (instance ${now.instance}) after "${stepOf(before)}" had started`);
    }
    if (now.instance < before.instance) say(`executions arrived out of instance order: ${JSON.stringify(hits)}`);
  }

  // Together with the order above, "a repeat only in a later instance" also means that a kill cuts short at most
  // one execution of a task: the repeats of one task run in instances that strictly increase.
  let crashRepeats = 0;
  let cutBeforeEffect = 0;
  for (const name of order) {
    const runs = hits.filter((hit) => stepOf(hit) === name);
    // Every attempt is journaled before its body runs, so an attempt number is never used twice. One may be
    // missing: a kill after the journal write and before the body's effect (each such gap needs a kill of its own).
    const first = runs[0];
    if (first && first.attempt - 1 > first.instance - 1) {
      say(`"${name}" first ran as attempt ${first.attempt} in instance ${first.instance}: too few kills before it`);
    }
    if (first) cutBeforeEffect += first.attempt - 1;
    for (let i = 1; i < runs.length; i++) {
      const [before, now] = [runs[i - 1]!, runs[i]!];
      if (now.attempt <= before.attempt) say(`"${name}" ran attempt ${before.attempt}, then attempt ${now.attempt}`);
      const skipped = now.attempt - before.attempt - 1;
      cutBeforeEffect += Math.max(0, skipped);
      if (failsByDesign(before)) {
        // Its retry may follow in the same instance; attempts missing in between each needed a kill.
        if (now.instance - before.instance < skipped)
          say(`"${name}": attempts ${before.attempt}→${now.attempt} without enough kills`);
        continue;
      }
      // `before` should have finished the step: it was cut short by a kill, and so was every attempt skipped.
      if (now.instance <= before.instance) {
        say(`"${name}" ran again without a crash in between (instances ${before.instance}, ${now.instance})`);
      } else if (now.instance - before.instance < skipped + 1) {
        say(`"${name}": attempts ${before.attempt}→${now.attempt} across only ${now.instance - before.instance} kills`);
      }
      crashRepeats++;
    }
    const mustRun = !(job.role === "cancel" && afterQuestion.has(name));
    if (!mustRun && runs.length > 0) say(`"${name}" ran ${runs.length} times after the task was cancelled`);
    // It must have run, and for the flaky step up to an attempt that does not fail by design (earlier attempts may
    // be missing from the record: cut by a kill before their effect, which the first-run check above accounts for).
    const last = runs.at(-1);
    if (mustRun && (!last || (name === "flaky" && last.attempt <= failFirst))) {
      say(`"${name}" ran ${runs.length} times, last as attempt ${last?.attempt ?? "-"}`);
    }
    if (outcome && outcome.attempts[name] !== runs.at(-1)?.attempt) {
      say(
        `"${name}" kept the result of attempt ${outcome.attempts[name]}, but its last run was ${runs.at(-1)?.attempt}`,
      );
    }
  }
  return { problems, crashRepeats, cutBeforeEffect };
}

/** What a task was doing when instance `instance` died, as far as its executions and statuses show. */
export function doingAtKill(job: CheckedJob, hits: Hit[], instance: number): string | null {
  const before = hits.filter((hit) => hit.instance <= instance).at(-1);
  const after = hits.find((hit) => hit.instance > instance);
  if (!before || !after) return null; // not started yet, or no step ran after: nothing of it was cut short
  const failFirst = job.args.flaky?.failFirst ?? 0;
  if (stepOf(before) === stepOf(after)) {
    return stepOf(before) === "flaky" && before.attempt <= failFirst
      ? "in a failing attempt or its retry wait"
      : "mid-step";
  }
  const all = stepOrder(job.args);
  const between = all.slice(all.indexOf(stepOf(before)) + 1, all.indexOf(stepOf(after)));
  if (between.includes("approve") && job.statusIn.get(instance) === "input_required") return "waiting for input";
  if (between.includes("nap")) return "in the durable sleep (or between steps)";
  return "between steps";
}
