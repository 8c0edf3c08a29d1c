// replayHistory / replayHistories (durable-mcp-server/testing): histories exported from real runs, replayed against
// the same handler (compatible) and against mutated ones (the first divergence, both keys), with no step body run;
// and every history that is refused before anything runs.
import { describe, expect, it } from "vitest";
import { TaskHistoryError } from "../../src/errors/history-errors.js";
import { MAX_HISTORY_BYTES } from "../../src/limits.js";
import { taskDefinitionOf, type TaskDefinition, type TaskRegistry } from "../../src/runner/task-definition.js";
import type { TaskHistory } from "../../src/steps/history-format.js";
import type { Step } from "../../src/steps/types.js";
import { RunnerClient } from "../../src/tasks/runner-client.js";
import { exportTaskHistory } from "../../src/tasks/export-history.js";
import { replayHistories, replayHistory } from "../../src/testing/replay-history.js";
import { fixtureEnv, isFinal, startTask, waitForTask } from "../helpers.js";

const runners = new RunnerClient(fixtureEnv.TASK_RUNNER);

/** Step bodies and handler starts seen by the handlers below: a replay check must run no body. */
const seen = { bodies: 0, handlers: 0 };
const body = async () => {
  seen.bodies++;
  return "ran";
};

function registry(handlers: Record<string, (input: unknown, step: Step) => Promise<unknown>>): TaskRegistry {
  return {
    [taskDefinitionOf]: (name: string): TaskDefinition | undefined => {
      const handler = handlers[name];
      if (!handler) return undefined;
      return {
        name,
        parseInput: (args) => ({ ok: true, value: args }),
        handler: (input, step) => (seen.handlers++, handler(input, step)),
        ttlMs: null,
        pollIntervalMs: 100,
      };
    },
  };
}

/** The fixture's three_steps, as deployed: the history below comes from a real run of it. */
async function threeSteps(
  _input: unknown,
  step: Step,
  mutate: Partial<Record<"b" | "c", "rename" | "sleep" | "drop">> = {},
) {
  await step.do("a", body);
  await step.status("after a", { progress: 1 / 3 });
  await step.sleep("pause-1", 1);
  if (mutate.b === "rename") await step.do("b2", body);
  else if (mutate.b === "sleep") await step.sleep("b", 1);
  else await step.do("b", body);
  await step.sleep("pause-2", 1);
  if (mutate.c !== "drop") await step.do("c", body);
  return { content: [{ type: "text", text: "done" }] };
}

/** `asks` with its unanswered question renamed. */
const asksRenamed = async (_input: unknown, step: Step) => {
  const schema = { type: "object" as const, properties: {} };
  await Promise.all([
    step.elicit("name", { message: "Your name?", requestedSchema: schema }),
    step.elicit("colour", { message: "Favourite colour?", requestedSchema: schema }),
  ]);
  return { content: [] };
};

/** A history whose second step was under way, or waiting for its retry, when it was exported. */
const parseHistory = (state: "running" | "waiting"): TaskHistory => ({
  format: "durable-mcp-server/history",
  version: 1,
  tool: "flaky",
  input: {},
  steps: [
    { name: "fetch", occurrence: 1, kind: "do", state: "done", result: "page", error: null, attempts: 1 },
    { name: "parse", occurrence: 1, kind: "do", state, error: null, attempts: 2 },
  ],
  exportedAt: new Date().toISOString(),
});

const flaky = async (_input: unknown, step: Step) => {
  await step.do("fetch", body);
  return step.do("parse", body);
};

/** The two-branch handler: branch 2 awaits a timer that is not a step before its journaled steps. */
const branches = async (_input: unknown, step: Step) => {
  const [a, [b, c]] = await Promise.all([
    step.do("a", body),
    (async () => {
      await new Promise((resolve) => setTimeout(resolve, 60));
      return Promise.all([step.do("b", body), step.do("c", body)]);
    })(),
  ]);
  return { a, b, c };
};

async function exportedThreeSteps(): Promise<TaskHistory> {
  const started = await startTask("three_steps");
  await waitForTask(started, isFinal);
  return exportTaskHistory(runners, started.taskId, { trustedSender: true });
}

async function problemOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(TaskHistoryError);
  return `${(error as TaskHistoryError).problem}: ${(error as TaskHistoryError).message}`;
}

describe("replayHistory", () => {
  it("finds a history exported from a real run compatible with the same handler, running no step body", async () => {
    const history = await exportedThreeSteps();
    seen.bodies = 0;
    const server = registry({ three_steps: (input, step) => threeSteps(input, step) });
    expect(await replayHistory(server, history)).toEqual({ compatible: true });
    // As the committed file an author keeps: its JSON text.
    expect(await replayHistory(server, JSON.stringify(history, null, 2))).toEqual({ compatible: true });
    // A step added after every journaled one counts as compatible; the new step's body does not run either.
    const added = registry({
      three_steps: async (input, step) => (await threeSteps(input, step), await step.do("d", body)),
    });
    expect(await replayHistory(added, history)).toEqual({ compatible: true });
    expect(seen.bodies).toBe(0);
  });

  it("reports a renamed, a removed and a retyped step with both keys", async () => {
    const history = await exportedThreeSteps();
    seen.bodies = 0;
    const mutated = (mutate: Parameters<typeof threeSteps>[2]) =>
      registry({ three_steps: (input, step) => threeSteps(input, step, mutate) });
    const [renamed, removed, retyped] = await replayHistories(
      registry({ three_steps: (input, step) => threeSteps(input, step, { b: "rename" }) }),
      [history],
    ).then(async (first) => [
      first[0]!,
      await replayHistory(mutated({ c: "drop" }), history),
      await replayHistory(mutated({ b: "sleep" }), history),
    ]);
    expect(renamed).toMatchObject({ compatible: false, divergence: { expected: "b#1 do", found: "b2#1 do" } });
    expect(removed).toMatchObject({
      compatible: false,
      divergence: { expected: "c#1 do", found: "the handler returned" },
    });
    expect(retyped).toMatchObject({ compatible: false, divergence: { expected: "b#1 do", found: "b#1 sleep" } });
    expect(seen.bodies).toBe(0);
  });

  it("stops a branch at a question the history left unanswered, and replays the answered one", async () => {
    const started = await startTask("asks");
    await waitForTask(started, (task) => task.status === "input_required");
    await started.stub.update(started.access, { name: { action: "accept", content: { name: "Ada" } } });
    const history = await exportTaskHistory(runners, started.taskId, { trustedSender: true });
    await started.stub.cancel(started.access);
    let answered: unknown;
    const asks = async (_input: unknown, step: Step) => {
      const schema = { type: "object" as const, properties: {} };
      await Promise.all([
        step.elicit("name", { message: "Your name?", requestedSchema: schema }).then((answer) => (answered = answer)),
        step.elicit("color", { message: "Favourite colour?", requestedSchema: schema }),
      ]);
      return { content: [] };
    };
    expect(await replayHistory(registry({ asks }), history)).toEqual({ compatible: true });
    expect(answered).toEqual({ action: "accept", content: { name: "Ada" } });
    // Asking the unanswered question under another name is reported.
    expect(await replayHistory(registry({ asks: asksRenamed }), history)).toMatchObject({
      compatible: false,
      divergence: { expected: "color#1 input", found: "colour#1 input" },
    });
  });

  it("stops at a step body under way or waiting for its retry in the history, never running it", async () => {
    seen.bodies = 0;
    expect(await replayHistory(registry({ flaky }), parseHistory("running"))).toEqual({ compatible: true });
    expect(await replayHistory(registry({ flaky }), parseHistory("waiting"))).toEqual({ compatible: true });
    expect(seen.bodies).toBe(0);
  });

  it("is compatible when a parallel branch awaits a timer that is not a step before its journaled step", async () => {
    const history: TaskHistory = {
      format: "durable-mcp-server/history",
      version: 1,
      tool: "branches",
      input: {},
      steps: [
        { name: "a", occurrence: 1, kind: "do", state: "done", result: 1, error: null, attempts: 1 },
        { name: "b", occurrence: 1, kind: "do", state: "done", result: 2, error: null, attempts: 1 },
        { name: "c", occurrence: 1, kind: "do", state: "done", result: 3, error: null, attempts: 1 },
      ],
      exportedAt: new Date().toISOString(),
    };
    seen.bodies = 0;
    expect(await replayHistory(registry({ branches }), history)).toEqual({ compatible: true });
    expect(seen.bodies).toBe(0);
  });
});

describe("replayHistory refuses a bad history before anything runs", () => {
  const good: TaskHistory = {
    format: "durable-mcp-server/history",
    version: 1,
    tool: "sum",
    input: { n: 1 },
    steps: [{ name: "double", occurrence: 1, kind: "do", state: "done", result: 2, error: null, attempts: 1 }],
    exportedAt: "2026-12-04T00:00:00.000Z",
  };
  const server = registry({ sum: async (_input, step) => step.do("double", body) });

  it("names what is wrong: malformed, a future version, another tool, over the size limit", async () => {
    seen.handlers = 0;
    expect(await problemOf(replayHistory(server, "{ not json"))).toMatch(/^malformed: the history is not JSON/);
    expect(await problemOf(replayHistory(server, { ...good, format: "other" } as never))).toMatch(
      /^malformed: .*"format" must be "durable-mcp-server\/history"/,
    );
    expect(await problemOf(replayHistory(server, { ...good, steps: undefined } as never))).toMatch(
      /^malformed: .*"steps" must be an array/,
    );
    const badStep = { ...good, steps: [{ ...good.steps[0]!, kind: "teleport" }] };
    expect(await problemOf(replayHistory(server, badStep as never))).toMatch(/^malformed: .*steps\[0\]\.kind/);
    const repeated = { ...good, steps: [good.steps[0]!, good.steps[0]!] };
    expect(await problemOf(replayHistory(server, repeated))).toMatch(/^malformed: .*steps\[1\] repeats step "double"/);
    expect(await problemOf(replayHistory(server, { ...good, version: 2 } as never))).toBe(
      "unsupported_version: the history is version 2; this library reads version 1",
    );
    expect(await problemOf(replayHistory(server, { ...good, tool: "report" }))).toBe(
      'unknown_tool: the server registers no task "report"',
    );
    const huge = { ...good, input: "x".repeat(MAX_HISTORY_BYTES) };
    expect(await problemOf(replayHistory(server, huge))).toMatch(/^too_large: the history is \d+ bytes; at most/);
    expect(seen.handlers).toBe(0);
  });

  it("refuses every history when one is bad, naming which, and runs none", async () => {
    seen.handlers = 0;
    expect(await problemOf(replayHistories(server, [good, { ...good, tool: "report" }]))).toBe(
      'unknown_tool: history 1: the server registers no task "report"',
    );
    expect(seen.handlers).toBe(0);
    expect(await replayHistories(server, [good, JSON.stringify(good)])).toEqual([
      { compatible: true },
      { compatible: true },
    ]);
    expect(seen.handlers).toBe(2);
  });
});
