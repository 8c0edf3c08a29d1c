// The testing kit: drives a Worker's tasks from an author's tests under @cloudflare/vitest-plugin, against the real
// runtime (SQLite Durable Objects, alarms, evictions). Over MCP it starts, reads, answers, cancels and waits; through
// `cloudflare:test` it runs a TaskRunner's alarm and evicts it; through the test-only seam of the TaskRunner a test
// config exports (withTestingSeam, runner/testing-seam.ts) it makes sleeps and back-offs due now and mocks step
// outcomes. docs/testing.md.
import { env as workerEnv, exports as workerExports } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, SELF } from "cloudflare:test";
import { taskIdForKey } from "../ids.js";
import {
  TESTING_SEAM,
  type InjectedOutcome,
  type TestingAnswer,
  type TestingOp,
  type TestingReply,
} from "../runner/index.js";
import { IDEMPOTENCY_KEY_META } from "../wire/meta-keys.js";
import { RunnerClient } from "../tasks/runner-client.js";
import { sendTaskEvent, type SendEventInput, type SendEventResult } from "../tasks/send-event.js";
import { stepLabel, type StepState, type StepTimelineEntry } from "../steps/step-record.js";
import { STEPS_META } from "../wire/meta-keys.js";
import { TASKS_EXTENSION } from "../wire/protocol.js";
import { CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/server";
import {
  FINAL,
  McpHttpClient,
  RpcError,
  sleep,
  type Exchange,
  type FetchLike,
  type JsonObject,
  type Task,
  type TaskStatus,
} from "./mcp-client.js";

export type { InjectedOutcome, StepState, StepTimelineEntry };

/**
 * `testTasks`' options: where the Worker's MCP endpoint is and how to reach it, who calls, how long to wait.
 * @example
 * ```ts
 * import { testTasks, type TestTasksOptions } from "durable-mcp-server/testing";
 *
 * const options: TestTasksOptions = { principal: "user:42", url: "http://localhost/mcp", timeoutMs: 10_000 };
 * const tasks = testTasks(options);
 * ```
 */
export interface TestTasksOptions {
  /** The MCP endpoint (default `http://localhost/mcp`: a loopback Host, which a Worker without `authenticate` serves). */
  url?: string;
  /** What requests go through (default: the Worker under test, `exports.default.fetch`). */
  fetch?: FetchLike;
  /** The TaskRunner namespace (default: `env.TASK_RUNNER` of the test's env). */
  binding?: DurableObjectNamespace;
  /** The principal the Worker binds these calls to (default "anonymous", a Worker without `authenticate`). */
  principal?: string;
  /** Headers on every request, e.g. the `authorization` your `authenticate` accepts. */
  headers?: Record<string, string>;
  /** Sees every request sent (for logging what a failing test did). */
  onExchange?: (exchange: Exchange) => void;
  /** How long `waitFor` and `waitForStep` wait by default (10 s). */
  timeoutMs?: number;
}

/**
 * `kit.start`'s options: the client capabilities to declare, and step outcomes to inject by step name.
 * @example
 * ```ts
 * import { testTasks, type StartOptions } from "durable-mcp-server/testing";
 *
 * const options: StartOptions = { inject: { "fetch figures": { result: { revenue: 1000 } } } };
 * const task = await testTasks().start("build_report", { region: "emea" }, options);
 * ```
 */
export interface StartOptions {
  /**
   * Step outcomes journaled before the task's first run, by step label (`name`, or `name#n` for use n of a repeated
   * name): the handler gets them instead of running
   * the steps' bodies (a mocked result, or a failure as if every retry had failed).
   */
  inject?: Record<string, InjectedOutcome>;
  /**
   * The client capabilities the call declares besides the Tasks extension: the kinds of question the task may ask.
   * Default: every kind (`elicitation` form and url, `sampling`, `roots`), as the kit answers any through `answer`.
   * Give less (e.g. `{}`) to test a task against a client that cannot answer (`InputUnavailableError`).
   */
  capabilities?: JsonObject;
}

/** What a kit call declares by default: a client that can answer every kind of question. */
const EVERY_KIND_OF_QUESTION: JsonObject = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };

/**
 * A misuse of the kit or a task that did not do what the test asked; the message says which and why.
 * @example
 * ```ts
 * import { TaskKitError, testTasks } from "durable-mcp-server/testing";
 *
 * try {
 *   await (await testTasks().start("build_report", { region: "emea" })).waitFor("completed", { timeoutMs: 1_000 });
 * } catch (error) {
 *   if (error instanceof TaskKitError) console.log(error.message, error.result);
 * }
 * ```
 */
export class TaskKitError extends Error {
  override name = "TaskKitError";
  /** The tool result a refused `start` got back, e.g. the invalid-arguments error. */
  readonly result?: JsonObject;
  /**
   * Built by the kit.
   * @param message - What went wrong and why.
   * @param options - The `cause`, and the tool `result` a failed start returned.
   */
  constructor(message: string, options: { cause?: unknown; result?: JsonObject } = {}) {
    super(message, { cause: options.cause });
    if (options.result) this.result = options.result;
  }
}

const DEFAULT_URL = "http://localhost/mcp";
const DEFAULT_TIMEOUT_MS = 10_000;
const POLL_MS = 10;

/**
 * The kit for one Worker: `start` a task of it, or take one by id with `task`.
 * @param options - Where the Worker's MCP endpoint is (by default its own default export, `SELF`), who calls.
 * @returns The kit: `start` a task, or take one by id with `task`.
 * @example
 * ```ts
 * import { testTasks } from "durable-mcp-server/testing";
 * import { expect, it } from "vitest";
 *
 * const tasks = testTasks();
 *
 * it("builds the report", async () => {
 *   const task = await tasks.start("build_report", { region: "emea" });
 *   await task.waitForStep("cool down", "waiting");
 *   await task.wake();
 *   expect((await task.waitFor("completed")).result).toBeDefined();
 * });
 * ```
 */
export function testTasks(options: TestTasksOptions = {}): TaskKit {
  return new TaskKit(options);
}

/**
 * The kit for one Worker's tasks in a test (`testTasks()` makes one): starts tasks and drives them through the
 * TaskRunner's test-only seam.
 * @example
 * ```ts
 * import { testTasks, type TaskKit } from "durable-mcp-server/testing";
 *
 * const kit: TaskKit = testTasks({ principal: "user:42" });
 * const task = await kit.start("build_report", { region: "emea" });
 * const same = kit.task(task.id);
 * ```
 */
export class TaskKit {
  /** The raw MCP client the kit speaks through, for requests the kit has no helper for. */
  readonly client: McpHttpClient;
  readonly #options: TestTasksOptions;

  /**
   * Prefer `testTasks(options)`.
   * @param options - As `testTasks` takes them.
   */
  constructor(options: TestTasksOptions) {
    this.#options = options;
    this.client = new McpHttpClient(options.url ?? DEFAULT_URL, {
      fetch: options.fetch ?? defaultFetch(),
      clientInfo: { name: "durable-mcp-server-testing", version: "1.0.0" },
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.onExchange ? { onExchange: options.onExchange } : {}),
    });
  }

  /**
   * Calls task tool `tool` with `args` and returns the task it started. Throws TaskKitError when the Worker has no
   * such tool, the tool is not a task, or it refused the arguments (the tool error is on `error.result`).
   */
  async start(tool: string, args: JsonObject = {}, options: StartOptions = {}): Promise<TestTask> {
    const inject = Object.entries(options.inject ?? {});
    let key: string | undefined;
    let expectedId: string | undefined;
    if (inject.length > 0) {
      // An idempotency key fixes the task id before the call, so the outcomes can be journaled in its TaskRunner
      // before the task's first run could reach them.
      key = `durable-mcp-testing-${crypto.randomUUID()}`;
      expectedId = await taskIdForKey(this.#options.principal ?? "anonymous", tool, key);
      for (const [step, outcome] of inject) await this.seam({ op: "inject", taskId: expectedId, step, outcome });
    }
    const envelope = this.client.envelope();
    const declared: JsonObject = {
      ...(options.capabilities ?? EVERY_KIND_OF_QUESTION),
      extensions: { [TASKS_EXTENSION]: {} },
    };
    const meta: JsonObject = {
      ...envelope,
      [CLIENT_CAPABILITIES_META_KEY]: declared,
      ...(key ? { [IDEMPOTENCY_KEY_META]: key } : {}),
    };
    let result: JsonObject;
    try {
      result = await this.client.call("tools/call", { name: tool, arguments: args, _meta: meta });
    } catch (error) {
      if (error instanceof RpcError) {
        const message = (error.error as { message?: string } | undefined)?.message ?? error.message;
        throw new TaskKitError(`tools/call ${tool} was refused: ${message}`, { cause: error });
      }
      throw error;
    }
    if (result.resultType !== "task" || typeof result.taskId !== "string") {
      const text = JSON.stringify(result).slice(0, 500);
      const why = result.isError === true ? "refused the call" : "is not a task tool: it answered at once";
      throw new TaskKitError(`${tool} ${why}: ${text}`, { result });
    }
    if (expectedId !== undefined && result.taskId !== expectedId) {
      throw new TaskKitError(
        `${tool} started a task for another principal than "${this.#options.principal ?? "anonymous"}", so the ` +
          "injected outcomes went elsewhere: pass testTasks({ principal }) as your authenticate() names the caller",
      );
    }
    return this.task(result.taskId);
  }

  /** A task of this Worker by id (nothing is checked until it is used). */
  task(taskId: string): TestTask {
    return new TestTask(this, taskId);
  }

  /** The TaskRunner stub of a task. */
  runner(taskId: string): DurableObjectStub {
    const binding = this.namespace();
    return binding.get(binding.idFromName(taskId));
  }

  /** The TaskRunner namespace the kit reaches (see `runner`). */
  namespace(): DurableObjectNamespace {
    const binding = this.#options.binding ?? (workerEnv as Record<string, unknown>)["TASK_RUNNER"];
    if (!isNamespace(binding)) {
      throw new TaskKitError(
        "the test env has no TASK_RUNNER Durable Object binding: pass testTasks({ binding: env.YOUR_TASK_RUNNER })",
      );
    }
    return binding;
  }

  /** One operation of the TaskRunner's test-only seam; its refusals become TaskKitErrors. */
  async seam(op: TestingOp): Promise<TestingReply> {
    const stub = this.runner(op.taskId) as unknown as Record<string, (op: TestingOp) => Promise<TestingAnswer>>;
    let answer: TestingAnswer;
    try {
      answer = await stub[TESTING_SEAM]!(op);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (message.includes(`does not implement "${TESTING_SEAM}"`)) {
        throw new TaskKitError(
          "this TaskRunner class has no testing seam: export withTestingSeam(yourTaskRunner) under the runner's class " +
            "name from the Worker your test config runs (durable-mcp-server/testing, docs/testing.md)",
          { cause: error },
        );
      }
      throw new TaskKitError(message, { cause: error });
    }
    if (!answer.ok) throw new TaskKitError(answer.refused);
    return answer.reply;
  }

  /** The principal the Worker binds the kit's calls to. */
  get principal(): string {
    return this.#options.principal ?? "anonymous";
  }

  get timeoutMs(): number {
    return this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }
}

/**
 * One task, as a test drives it.
 * @example
 * ```ts
 * import { testTasks } from "durable-mcp-server/testing";
 *
 * const task = await testTasks().start("send_report", { to: "ada@example.com" });
 * await task.waitFor("input_required");
 * await task.answer({ confirm: { action: "accept", content: { send: true } } });
 * await task.waitFor("completed");
 * ```
 */
export class TestTask {
  readonly #kit: TaskKit;
  readonly id: string;

  /**
   * Prefer `kit.start` or `kit.task(id)`.
   * @param kit - The kit it belongs to.
   * @param taskId - The task's id.
   */
  constructor(kit: TaskKit, taskId: string) {
    this.#kit = kit;
    this.id = taskId;
  }

  /** `tasks/get` with the step timeline (`_meta["durable-mcp-server/steps"]`). */
  async get(): Promise<Task> {
    const meta = { ...this.#kit.client.envelope(), [STEPS_META]: true };
    try {
      return (await this.#kit.client.call("tasks/get", { taskId: this.id, _meta: meta })) as unknown as Task;
    } catch (error) {
      if (error instanceof RpcError) {
        throw new TaskKitError(`task ${this.id} cannot be read: ${error.message}`, { cause: error });
      }
      throw error;
    }
  }

  /** The step timeline, oldest first. */
  async steps(): Promise<StepTimelineEntry[]> {
    return timelineOf(await this.get());
  }

  /** The questions the task waits on, by key (empty unless it is `input_required`). */
  async questions(): Promise<Record<string, JsonObject>> {
    return (await this.get()).inputRequests ?? {};
  }

  /**
   * Answers the task's questions, by key (`{ [key]: { action: "accept", content } }` for an elicitation). Throws
   * when the task asks nothing, names the keys it asks when an answer is for another, and passes the server's
   * refusal of an answer that does not fit its question.
   */
  async answer(responses: JsonObject): Promise<void> {
    const task = await this.get();
    const asked = Object.keys(task.inputRequests ?? {});
    if (task.status !== "input_required" || asked.length === 0) {
      throw new TaskKitError(`task ${this.id} asks nothing: it is ${task.status}`);
    }
    const unknown = Object.keys(responses).filter((key) => !asked.includes(key));
    if (unknown.length > 0) {
      throw new TaskKitError(`task ${this.id} does not ask ${unknown.join(", ")}; it asks ${asked.join(", ")}`);
    }
    try {
      await this.#kit.client.updateTask(this.id, responses);
    } catch (error) {
      if (error instanceof RpcError)
        throw new TaskKitError(`the answer was refused: ${error.message}`, { cause: error });
      throw error;
    }
  }

  async cancel(): Promise<void> {
    await this.#kit.client.cancelTask(this.id);
  }

  /**
   * Sends the task an event, as the Worker's `mcp.sendEvent(env, taskId, event, { principal })` would (with the kit's
   * principal): a waiting `step.waitForEvent` of its type takes it, else the task keeps it. Throws what sendEvent
   * throws (EventRefusedError) for a finished task, a full buffer or an invalid event.
   */
  async sendEvent(event: SendEventInput): Promise<SendEventResult> {
    return sendTaskEvent(new RunnerClient(this.#kit.namespace()), this.id, event, {
      principal: this.#kit.principal,
    });
  }

  /** Waits until the task's status is one of `status` (polling `tasks/get`); the snapshot that matched. */
  async waitFor(status: TaskStatus | TaskStatus[], options: { timeoutMs?: number } = {}): Promise<Task> {
    const wanted = Array.isArray(status) ? status : [status];
    return this.#poll(
      (task) => wanted.includes(task.status),
      (task) => FINAL.has(task.status) && !wanted.includes(task.status),
      `status ${wanted.join(" or ")}`,
      options.timeoutMs,
    );
  }

  /**
   * Waits until step `name` is in `state` (e.g. a sleep or a retry "waiting", a step "done"). `name` is a step label:
   * the name for its first use, `name#n` for use n of a repeated name.
   */
  async waitForStep(name: string, state: StepState, options: { timeoutMs?: number } = {}): Promise<Task> {
    return this.#poll(
      (task) => timelineOf(task).some((step) => stepLabel(step.name, step.occurrence) === name && step.state === state),
      (task) => FINAL.has(task.status),
      `step "${name}" ${state}`,
      options.timeoutMs,
    );
  }

  /**
   * Makes the task's waiting sleeps and retry back-offs due now — or only step `step` (which may also be an input
   * with a timeout, which then times out) — and runs its alarm, so the task goes on without the test waiting.
   * Returns the steps it made due. Throws when nothing of that waits on a clock, or the task is final.
   */
  async wake(step?: string): Promise<string[]> {
    const reply = await this.#kit.seam(
      step === undefined ? { op: "wake", taskId: this.id } : { op: "wake", taskId: this.id, step },
    );
    // The seam leaves the task's alarm where it was (an hour's sleep: an hour ahead), so this runs it, and the
    // run, before returning.
    await runDurableObjectAlarm(this.#kit.runner(this.id));
    return reply.steps;
  }

  /**
   * Journals step `step`'s outcome, as if its body had returned `result` or failed for good with `error`. For a
   * step the task has not reached yet, or one waiting for a retry (then the task goes on at once). Injected results
   * pass the same checks as real ones (JSON, at most 1 MiB). To mock a task's first steps, use `start`'s `inject`.
   */
  async inject(step: string, outcome: InjectedOutcome): Promise<void> {
    const reply = await this.#kit.seam({ op: "inject", taskId: this.id, step, outcome });
    if (reply.wake) await runDurableObjectAlarm(this.#kit.runner(this.id));
  }

  /**
   * Evicts the task's TaskRunner (its memory is gone, its storage stays): the next run replays the journal, which is
   * what proves a handler deterministic. Throws for a finished task, whose runner has nothing left to replay.
   */
  async evict(): Promise<void> {
    // Reading it also makes sure the object is running, which eviction requires.
    const task = await this.get();
    if (FINAL.has(task.status)) {
      throw new TaskKitError(`task ${this.id} is ${task.status}: evicting a finished task replays nothing`);
    }
    await evictDurableObject(this.#kit.runner(this.id));
  }

  async #poll(
    done: (task: Task) => boolean,
    hopeless: (task: Task) => boolean,
    what: string,
    timeoutMs = this.#kit.timeoutMs,
  ): Promise<Task> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const task = await this.get();
      if (done(task)) return task;
      if (hopeless(task) || Date.now() >= deadline) {
        const why = hopeless(task) ? "it ended first" : `not within ${timeoutMs} ms`;
        throw new TaskKitError(`task ${this.id} did not reach ${what} (${why}): it is ${describe(task)}`);
      }
      await sleep(POLL_MS);
    }
  }
}

function timelineOf(task: Task): StepTimelineEntry[] {
  const timeline = task._meta?.[STEPS_META] as unknown as { steps?: StepTimelineEntry[] } | undefined;
  return timeline?.steps ?? [];
}

function describe(task: Task): string {
  const steps = timelineOf(task)
    .map((step) => `${stepLabel(step.name, step.occurrence)}: ${step.state}`)
    .join(", ");
  return `${task.status}${task.statusMessage ? ` ("${task.statusMessage}")` : ""}, steps [${steps}]`;
}

function isNamespace(value: unknown): value is DurableObjectNamespace {
  const candidate = value as Partial<DurableObjectNamespace> | null | undefined;
  return typeof candidate?.idFromName === "function" && typeof candidate.get === "function";
}

/** The Worker under test: its default export through `exports` where the runtime has it, else `SELF`. */
function defaultFetch(): FetchLike {
  const main = (workerExports as unknown as { default?: { fetch?: unknown } } | undefined)?.default;
  if (typeof main?.fetch === "function") {
    return (input, init) => (main as Fetcher).fetch(input, init as RequestInit<CfProperties>);
  }
  return (input, init) => SELF.fetch(input, init as RequestInit<CfProperties>);
}
