// The crash suite's checks on records that break each rule: every verdict of crash-checks.ts can fail.
import { describe, expect, it } from "vitest";
import { workValue, type LabJobArgs } from "../src/lab.ts";
import { stepOf, type Hit } from "./counter.ts";
import { doingAtKill, judge, type CheckedJob, type Role } from "./crash-checks.ts";
import type { Task } from "@durable-mcp/test-harness";

const TASK = "T".repeat(32);
// Effect steps in order: work 0, work 1, flaky (fails its first attempt), work 2, work 3; nap and approve between.
const ARGS: LabJobArgs = {
  steps: 4,
  stepMs: 100,
  sleepMs: 500,
  flaky: { failFirst: 1, retryMs: 300 },
  ask: true,
  salt: 3,
  job: "job-0",
};

const job = (role: Role = "answer"): CheckedJob => ({
  index: 0,
  role,
  args: ARGS,
  code: "c-0",
  taskId: TASK,
  statusIn: new Map(),
});

/** Hits from [step, attempt, instance] triples, in arrival order; each step's key is fixed per step. */
const record = (...runs: [string, number, number][]): Hit[] =>
  runs.map(([step, attempt, instance], seq) => ({
    key: `key-of-${step}`,
    job: "job-0",
    step,
    attempt,
    instance,
    seq,
    at: seq,
  }));

const completed = (attempts: Record<string, number>, values = [0, 1, 2, 3].map((i) => workValue(3, i))): Task => ({
  taskId: TASK,
  status: "completed",
  createdAt: "",
  lastUpdatedAt: "",
  result: { structuredContent: { values, attempts, answer: "c-0" } },
});

const ONCE = { "work 0": 1, "work 1": 1, flaky: 2, "work 2": 1, "work 3": 1 };
const clean = (): [string, number, number][] => [
  ["work 0", 1, 1],
  ["work 1", 1, 1],
  ["flaky", 1, 1],
  ["flaky", 2, 1],
  ["work 2", 1, 1],
  ["work 3", 1, 1],
];

/** The problems judge() finds. */
const fails = (hits: Hit[], view = completed(ONCE), role: Role = "answer") => judge(job(role), view, hits).problems;

describe("crash checks", () => {
  it("accept a clean record: a designed failure's retry is no repeat", () => {
    expect(judge(job(), completed(ONCE), record(...clean()))).toEqual({
      problems: [],
      crashRepeats: 0,
      cutBeforeEffect: 0,
    });
  });

  it("accept a repeat across a kill, and an attempt killed before its effect when a kill accounts for it", () => {
    const hits = record(
      ["work 0", 1, 1],
      ["work 1", 1, 1],
      ["work 1", 2, 2],
      ["flaky", 1, 2],
      ["flaky", 3, 3],
      ["work 2", 1, 3],
      ["work 3", 1, 3],
    );
    expect(judge(job(), completed({ ...ONCE, "work 1": 2, flaky: 3 }), hits)).toEqual({
      problems: [],
      crashRepeats: 1,
      cutBeforeEffect: 1,
    });
  });

  it("accept a flaky step whose failing attempt was killed before its effect (seed 3870235492 in CI)", () => {
    const hits = record(["work 0", 1, 1], ["work 1", 1, 1], ["flaky", 2, 2], ["work 2", 1, 2], ["work 3", 1, 2]);
    expect(judge(job(), completed(ONCE), hits)).toEqual({ problems: [], crashRepeats: 0, cutBeforeEffect: 1 });
    // Without the kill that accounts for the missing attempt, it is still a problem.
    expect(
      fails(record(["work 0", 1, 1], ["work 1", 1, 1], ["flaky", 2, 1], ["work 2", 1, 1], ["work 3", 1, 1])),
    ).toEqual([expect.stringContaining('"flaky" first ran as attempt 2 in instance 1: too few kills before it')]);
  });

  it("reject a flaky step that never got past its failing attempts", () => {
    expect(
      fails(record(["work 0", 1, 1], ["work 1", 1, 1], ["flaky", 1, 1], ["work 2", 1, 1], ["work 3", 1, 1])),
    ).toEqual([
      expect.stringContaining('"flaky" ran 1 times, last as attempt 1'),
      expect.stringContaining('"flaky" kept the result of attempt 2, but its last run was 1'),
    ]);
  });

  it("reject a repeat within one instance", () => {
    expect(
      fails(
        record(
          ["work 0", 1, 1],
          ["work 0", 2, 1],
          ["work 1", 1, 1],
          ["flaky", 1, 1],
          ["flaky", 2, 1],
          ["work 2", 1, 1],
          ["work 3", 1, 1],
        ),
        completed({ ...ONCE, "work 0": 2 }),
      ),
    ).toEqual([expect.stringContaining('"work 0" ran again without a crash in between')]);
  });

  it("reject a finished step that runs again, even across a kill", () => {
    const hits = record(
      ["work 0", 1, 1],
      ["work 1", 1, 1],
      ["work 0", 2, 2],
      ["flaky", 1, 2],
      ["flaky", 2, 2],
      ["work 2", 1, 2],
      ["work 3", 1, 2],
    );
    expect(fails(hits, completed({ ...ONCE, "work 0": 2 }))).toEqual([
      expect.stringContaining('"work 0" ran again (instance 2) after "work 1"'),
    ]);
  });

  it("reject an attempt number used twice", () => {
    const hits = record(
      ["work 0", 1, 1],
      ["work 0", 1, 2],
      ...clean()
        .slice(1)
        .map(([s, a]): [string, number, number] => [s, a, 2]),
    );
    expect(fails(hits)).toEqual([expect.stringContaining('"work 0" ran attempt 1, then attempt 1')]);
  });

  it("reject attempts killed before their effect when too few kills account for them", () => {
    const skipped = record(
      ["work 0", 1, 1],
      ["work 0", 3, 2],
      ...clean()
        .slice(1)
        .map(([s, a]): [string, number, number] => [s, a, 2]),
    );
    expect(fails(skipped, completed({ ...ONCE, "work 0": 3 }))).toEqual([
      expect.stringContaining('"work 0": attempts 1→3 across only 1 kills'),
    ]);
    const late = record(
      ["work 0", 3, 2],
      ...clean()
        .slice(1)
        .map(([s, a]): [string, number, number] => [s, a, 2]),
    );
    expect(fails(late, completed({ ...ONCE, "work 0": 3 }))).toEqual([
      expect.stringContaining('"work 0" first ran as attempt 3 in instance 2'),
    ]);
  });

  it("reject executions from an older instance after a newer one's", () => {
    const hits = record(
      ["work 0", 1, 2],
      ["work 1", 1, 1],
      ["flaky", 1, 2],
      ["flaky", 2, 2],
      ["work 2", 1, 2],
      ["work 3", 1, 2],
    );
    expect(fails(hits)).toEqual([expect.stringContaining("out of instance order")]);
  });

  it("reject a step that never ran, an unknown step, and a kept result from another attempt", () => {
    expect(fails(record(...clean().filter(([step]) => step !== "work 2")))).toEqual([
      expect.stringContaining('"work 2" ran 0 times'),
      expect.stringContaining('"work 2" kept the result of attempt 1, but its last run was undefined'),
    ]);
    expect(fails(record(...clean(), ["work 9", 1, 1]))).toEqual([expect.stringContaining('unknown step "work 9"')]);
    expect(fails(record(...clean()), completed({ ...ONCE, flaky: 1 }))).toEqual([
      expect.stringContaining('"flaky" kept the result of attempt 1'),
    ]);
  });

  it("reject a wrong status, wrong values, a wrong answer", () => {
    expect(fails(record(...clean()), { ...completed(ONCE), status: "failed" })).toEqual([
      expect.stringContaining("ended failed, expected completed"),
    ]);
    expect(fails(record(...clean()), completed(ONCE, [0, 1, 2, 3]))).toEqual([
      expect.stringContaining("values [0,1,2,3]"),
    ]);
    const view = completed(ONCE);
    (view.result!.structuredContent as { answer: string }).answer = "other";
    expect(fails(record(...clean()), view)).toEqual([expect.stringContaining('answer "other", expected "c-0"')]);
  });

  it("reject a step after the question of a cancelled task", () => {
    const cancelled: Task = { taskId: TASK, status: "cancelled", createdAt: "", lastUpdatedAt: "" };
    const before = clean().slice(0, 4);
    expect(fails(record(...before), cancelled, "cancel")).toEqual([]);
    expect(fails(record(...before, ["work 2", 1, 1]), cancelled, "cancel")).toEqual([
      expect.stringContaining('"work 2" ran 1 times after the task was cancelled'),
    ]);
  });

  it("reject a step re-keyed between its executions, two steps sharing a key, and a key with the task id", () => {
    const hits = record(...clean());
    hits[3] = { ...hits[3]!, key: "another-key" };
    expect(fails(hits)).toEqual([expect.stringContaining('"flaky" ran with key another-key after key-of-flaky')]);
    const shared = record(...clean()).map((hit) => (stepOf(hit) === "work 1" ? { ...hit, key: "key-of-work 0" } : hit));
    expect(fails(shared)).toEqual([expect.stringContaining("steps share an idempotency key")]);
    const leaky = record(...clean()).map((hit) => (stepOf(hit) === "work 2" ? { ...hit, key: `${TASK}:work 2` } : hit));
    expect(fails(leaky)).toEqual([expect.stringContaining('"work 2" was handed a key with the task id')]);
  });

  it("tell what a task was doing at a kill", () => {
    const hits = record(
      ["work 0", 1, 1],
      ["work 1", 1, 1],
      ["work 1", 2, 2],
      ["flaky", 1, 3],
      ["flaky", 2, 4],
      ["work 2", 1, 6],
      ["work 3", 1, 6],
    );
    const waiting = job();
    waiting.statusIn.set(5, "input_required");
    expect([1, 2, 3, 4, 5, 6].map((instance) => doingAtKill(waiting, hits, instance))).toEqual([
      "mid-step",
      "in the durable sleep (or between steps)",
      "in a failing attempt or its retry wait",
      "between steps",
      "waiting for input",
      null,
    ]);
  });
});
