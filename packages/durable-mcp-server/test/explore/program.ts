// Handler programs for the exploration suite (test/explore/): a small language of steps, sequences and parallel
// groups; the interpreter that runs one as a task handler (test/fixtures/explore-runner.ts), and the model that says
// what a crash-free run of it returns.

/** One operation of a program. `id`: its place in the program (pre-order), which names its crash points. */
export type Op =
  | { k: "do"; id: number; name: string; mode: "ok" | "retry" | "throw" | "nonretry"; ms: number }
  | { k: "sleep"; id: number; name: string }
  | { k: "event"; id: number; name: string }
  | { k: "ask"; id: number; name: string }
  /** A non-step await (a timer) of `ms` on the first run, `replayMs` on every later one. */
  | { k: "wait"; id: number; ms: number; replayMs: number }
  | { k: "par"; id: number; branches: Op[][] }
  /** A step that fails for good, not caught: the handler throws (at most one per program). */
  | { k: "fail"; id: number; name: string };

export type Program = Op[];

/** Where a crash is injected: `before:<id>` (entering op id) or `body:<id>` (a `do` body, after its effect). */
export type CrashPoint = `before:${number}` | `body:${number}`;

export type Crash = { kind: "abort"; point: CrashPoint } | { kind: "evict"; round: number } | { kind: "none" };

/** What the interpreter is given as its task input. */
export interface ProgramInput {
  probe: string;
  /** The TaskRunner's object id (the interpreter aborts it there for a crash). */
  objectId: string;
  program: Program;
  crash: Crash;
  /** Read the probe's "mutation" ({ rename | remove: op id }) at each run: a deploy that changed a finished step. */
  mutable?: boolean;
}

export interface Mutation {
  rename?: number;
  remove?: number;
}

export type Outcome = { returned: unknown } | { threw: string };

/**
 * What a crash-free run of `program` returns (or which step it throws at). `interrupted`: the steps a crash cut short
 * on their last attempt, which end `StepInterruptedError` instead (docs/how-it-works.md rule 5).
 */
export function expectedOutcome(program: Program, interrupted: ReadonlySet<string> = new Set()): Outcome {
  const failed = findFail(program);
  if (failed !== undefined) return { threw: failed };
  return { returned: evalSequence(program, interrupted) };
}

/** Retries every `do` step of the interpreter allows (test/fixtures/explore-runner.ts): attempts are this plus one. */
export const RETRY_LIMIT = 3;

/** The steps a crash can cut short on their last attempt: those that use every attempt, which only "throw" does. */
export function lastAttemptSteps(program: Program): Set<string> {
  const names = new Set<string>();
  const walk = (ops: Op[]) => {
    for (const op of ops) {
      if (op.k === "do" && op.mode === "throw") names.add(op.name);
      if (op.k === "par") op.branches.forEach(walk);
    }
  };
  walk(program);
  return names;
}

function findFail(ops: Op[]): string | undefined {
  for (const op of ops) {
    if (op.k === "fail") return op.name;
    if (op.k === "par") {
      for (const branch of op.branches) {
        const inner = findFail(branch);
        if (inner !== undefined) return inner;
      }
    }
  }
  return undefined;
}

function evalSequence(ops: Op[], interrupted: ReadonlySet<string>): unknown[] {
  return ops.map((op) => {
    switch (op.k) {
      case "do":
        return interrupted.has(op.name)
          ? `E:${op.name}:StepInterruptedError`
          : op.mode === "throw"
            ? `E:${op.name}:Error`
            : op.mode === "nonretry"
              ? `E:${op.name}:NonRetryableError`
              : op.name;
      case "sleep":
        return "s";
      case "event":
        return `V:${op.name}`;
      case "ask":
        return `A:${op.name}`;
      case "wait":
        return "w";
      case "par":
        return op.branches.map((branch) => evalSequence(branch, interrupted));
      case "fail":
        return "unreachable";
    }
  });
}

/** Every crash point of `program`, in pre-order. */
export function crashPoints(program: Program): CrashPoint[] {
  const points: CrashPoint[] = [];
  const walk = (ops: Op[]) => {
    for (const op of ops) {
      points.push(`before:${op.id}`);
      if (op.k === "do" && op.mode === "ok") points.push(`body:${op.id}`);
      if (op.k === "par") op.branches.forEach(walk);
    }
  };
  walk(program);
  return points;
}

/** Numbers the ops of `program` in pre-order (ids name crash points). */
export function numbered(program: Program): Program {
  let next = 0;
  const walk = (ops: Op[]): Op[] =>
    ops.map((op) => {
      const id = next++;
      return op.k === "par" ? { ...op, id, branches: op.branches.map(walk) } : { ...op, id };
    });
  return walk(program);
}

/** How many steps `program` has (every op but timers and groups): a bound on its journal's rows. */
export function stepCount(program: Program): number {
  let count = 0;
  const walk = (ops: Op[]) => {
    for (const op of ops) {
      if (op.k === "par") op.branches.forEach(walk);
      else if (op.k !== "wait") count++;
    }
  };
  walk(program);
  return count;
}

/** A readable one-line form of a program, for failure reports. */
export function show(program: Program): string {
  const one = (op: Op): string => {
    switch (op.k) {
      case "do":
        return `do(${op.name},${op.mode}${op.ms ? `,${op.ms}ms` : ""})`;
      case "sleep":
        return `sleep(${op.name})`;
      case "event":
        return `event(${op.name})`;
      case "ask":
        return `ask(${op.name})`;
      case "wait":
        return `wait(${op.ms}/${op.replayMs}ms)`;
      case "fail":
        return `fail(${op.name})`;
      case "par":
        return `par[${op.branches.map((branch) => branch.map(one).join("; ")).join(" | ")}]`;
    }
  };
  return program.map(one).join("; ");
}
