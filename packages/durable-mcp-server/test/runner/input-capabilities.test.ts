// Questions only where they can be answered: a task may ask only what the request that created it declared
// (issue 12, item 2). Over the fixture Worker's wire, real TaskRunners; `ask_kind` waits at an hour's sleep (the
// "gate") that these tests make due with the testing kit, so a watch is open before the question could be asked.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ClientCapabilities } from "@modelcontextprotocol/server";
import type { TaskRunnerRpc } from "../../src/runner/task-runner-rpc.js";
import { testTasks } from "../../src/testing/index.js";
import { missingInputCapability, questionCapabilities } from "../../src/wire/input-capabilities.js";
import { TaskStore } from "../../src/runner/task-store.js";
import { runInDurableObject } from "cloudflare:test";
import type { DetailedTask } from "../../src/wire/task-shapes.js";
import type { FixtureEnv } from "../fixtures/worker.js";
import { envelope, pollTask, rpc } from "../jsonrpc.js";

const fixtureEnv = env as unknown as FixtureEnv;
const kit = testTasks({
  url: "http://fixture.test/mcp",
  binding: fixtureEnv.MCP_TASK_RUNNER,
  principal: "alice",
  headers: { authorization: "Bearer alice" },
});
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };

/** tools/call of ask_kind from a Tasks client that declares exactly `capabilities`. */
async function ask(kind: string, capabilities: Record<string, unknown>, args: Record<string, unknown> = {}) {
  const reply = await rpc("tools/call", {
    name: "ask_kind",
    arguments: { kind, ...args },
    _meta: envelope(true, capabilities),
  });
  const created = reply.body.result!;
  expect(created).toMatchObject({ resultType: "task", status: "working" });
  return created.taskId as string;
}

/** Every state the task passes through from now on (through the runner's watch), once its gate is made due. */
async function statesAfterGate(taskId: string): Promise<DetailedTask[]> {
  const runner = fixtureEnv.MCP_TASK_RUNNER.get(
    fixtureEnv.MCP_TASK_RUNNER.idFromName(taskId),
  ) as unknown as TaskRunnerRpc;
  const task = kit.task(taskId);
  await task.waitForStep("gate", "waiting");
  const stream = (await runner.watch({ taskId, principal: "alice" })) as ReadableStream<Uint8Array>;
  expect(await task.wake("gate")).toEqual(["gate"]);
  const seen: DetailedTask[] = [];
  const lines = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { done, value } = await lines.read();
    if (done) break;
    buffered += value;
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    // Empty lines are the stream's keep-alive.
    seen.push(...parts.filter((line) => line !== "").map((line) => JSON.parse(line) as DetailedTask));
  }
  return seen;
}

const envelopeOf = (task: DetailedTask) =>
  (task.result as { structuredContent?: { error?: unknown } })?.structuredContent?.error;
const textOf = (task: Record<string, any>) => JSON.parse(task.result.content[0].text);

/** What a client declares arrives as unchecked JSON: the tests use shapes ClientCapabilities does not allow. */
const asDeclared = (value: unknown) => value as ClientCapabilities;

describe("a task asks only what its client declared", () => {
  it("never shows input_required to a Tasks client without elicitation: the task ends input_unavailable", async () => {
    const taskId = await ask("form", TASKS);
    const states = await statesAfterGate(taskId);
    expect(states.map((state) => state.status)).not.toContain("input_required");
    const last = states.at(-1)!;
    expect(last.status).toBe("completed");
    expect(last.inputRequests).toBeUndefined();
    expect(last.result).toMatchObject({ isError: true });
    expect(envelopeOf(last)).toMatchObject({
      code: "input_unavailable",
      retryable: false,
      details: { step: "question", method: "elicitation/create", capability: "elicitation.form" },
    });
    // The question is journaled as failed, never as waiting: a replay throws the same error again.
    expect(await kit.task(taskId).steps()).toMatchObject([
      { name: "gate", kind: "sleep", state: "done" },
      { name: "question", kind: "input", state: "failed" },
    ]);
    // tasks/get agrees, over the wire.
    const got = await rpc("tasks/get", { taskId });
    expect(got.body.result).toMatchObject({ status: "completed", result: { isError: true } });
  });

  it("lets the handler catch InputUnavailableError and go on with a default, on every replay", async () => {
    const taskId = await ask("sampling", { ...TASKS, elicitation: { form: {} } }, { useDefault: true });
    const task = kit.task(taskId);
    await task.waitForStep("gate", "waiting");
    await task.wake("gate");
    // The default is taken and the handler pauses; after an eviction the run that goes on replays the question.
    await task.waitForStep("then", "waiting");
    expect((await task.get()).status).toBe("working");
    await task.evict();
    await task.wake("then");
    const done = (await task.waitFor("completed")) as Record<string, any>;
    expect(done.result.isError).toBeUndefined();
    expect(textOf(done)).toEqual({ default: true, missing: "sampling" });
    expect(await task.steps()).toMatchObject([
      { name: "gate", state: "done" },
      { name: "question", kind: "input", state: "failed" },
      { name: "then", state: "done" },
    ]);
  });

  it("asks a question of every kind its client declared, and takes the answer that kind has", async () => {
    for (const [kind, capabilities, answer] of [
      ["form", { elicitation: {} }, { action: "accept", content: { ok: true } }],
      ["url", { elicitation: { url: {} } }, { action: "accept" }],
      ["sampling", { sampling: {} }, { role: "assistant", content: { type: "text", text: "teal" }, model: "m-1" }],
      ["roots", { roots: {} }, { roots: [{ uri: "file:///work", name: "work" }] }],
    ] as const) {
      const taskId = await ask(kind, { ...TASKS, ...capabilities });
      await kit.task(taskId).waitForStep("gate", "waiting");
      await kit.task(taskId).wake("gate");
      const waiting = await pollTask(taskId, (task) => task.status === "input_required");
      expect(Object.keys(waiting.inputRequests), kind).toEqual(["question"]);
      await rpc("tasks/update", { taskId, inputResponses: { question: answer } });
      const done = await pollTask(taskId, (task) => task.status === "completed");
      expect(textOf(done), kind).toEqual({ answer });
    }
  });

  it("refuses a tasks/update answer that is not the result its question's kind takes, and records nothing", async () => {
    const taskId = await ask("sampling", { ...TASKS, sampling: {} });
    await kit.task(taskId).waitForStep("gate", "waiting");
    await kit.task(taskId).wake("gate");
    await pollTask(taskId, (task) => task.status === "input_required");
    // The elicitation shape is not a CreateMessageResult.
    const wrong = await rpc("tasks/update", { taskId, inputResponses: { question: { action: "accept" } } });
    expect(wrong.body.error).toMatchObject({ code: -32602, data: { key: "question" } });
    const still = await rpc("tasks/get", { taskId });
    expect(still.body.result).toMatchObject({ status: "input_required" });
    await rpc("tasks/cancel", { taskId });
  });
});

const call = async (name: string, args: Record<string, unknown>) =>
  (await rpc("tools/call", { name, arguments: args }, { declare: false })).body.result as Record<string, any>;

describe("clients on the facade tools are unaffected", () => {
  it("shows a sampling question as a handle and takes a CreateMessageResult through durable_task_respond", async () => {
    const started = await call("ask_kind", { kind: "sampling" });
    const taskId = started.structuredContent.taskId as string;
    await kit.task(taskId).waitForStep("gate", "waiting");
    await kit.task(taskId).wake("gate");
    let view = await call("durable_task_get", { taskId });
    while (view.structuredContent.status !== "input_required") view = await call("durable_task_get", { taskId });
    // The handle shows the answer a model call takes, not the form shape.
    expect(view.structuredContent.next.arguments.answers.question).toMatchObject({
      role: "assistant",
      model: expect.any(String),
    });
    expect(view.content[0].text).toContain("Name a colour");

    const formShaped = await call("durable_task_respond", { taskId, answers: { question: { action: "accept" } } });
    expect(formShaped.structuredContent.error).toMatchObject({
      code: "invalid_param",
      param: expect.stringMatching(/^answers\.question/),
    });
    expect(formShaped.structuredContent.error.message).toContain("CreateMessageResult");

    const reply = { role: "assistant", content: { type: "text", text: "teal" }, model: "the-model" };
    await call("durable_task_respond", { taskId, answers: { question: reply } });
    let done = await call("durable_task_get", { taskId });
    while (done.structuredContent?.status) done = await call("durable_task_get", { taskId });
    expect(JSON.parse(done.content[0].text)).toEqual({ answer: reply });
  });

  it("takes a ListRootsResult for a roots question, and refuses roots that are not file URIs", async () => {
    const started = await call("ask_kind", { kind: "roots" });
    const taskId = started.structuredContent.taskId as string;
    await kit.task(taskId).waitForStep("gate", "waiting");
    await kit.task(taskId).wake("gate");
    while ((await call("durable_task_get", { taskId })).structuredContent.status !== "input_required");
    const bad = await call("durable_task_respond", {
      taskId,
      answers: { question: { roots: [{ uri: "https://x" }] } },
    });
    expect(bad.structuredContent.error).toMatchObject({ code: "invalid_param", param: "answers.question.roots.0.uri" });
    const roots = { roots: [{ uri: "file:///srv/repo" }] };
    await call("durable_task_respond", { taskId, answers: { question: roots } });
    let done = await call("durable_task_get", { taskId });
    while (done.structuredContent?.status) done = await call("durable_task_get", { taskId });
    expect(JSON.parse(done.content[0].text)).toEqual({ answer: roots });
  });
});

describe("what is stored of a declaration", () => {
  it("stores only what decides the questions, however large the client's declaration (3 MB here)", async () => {
    const padding = "x".repeat(3_000_000);
    const taskId = await ask("form", { ...TASKS, elicitation: { form: { padding } } });
    const stub = fixtureEnv.MCP_TASK_RUNNER.get(fixtureEnv.MCP_TASK_RUNNER.idFromName(taskId));
    const record = await runInDurableObject(stub, (_, state) => new TaskStore(state.storage.sql).read());
    expect(record?.clientCapabilities).toEqual({ elicitation: { form: {} } });
    await rpc("tasks/cancel", { taskId });
  });

  it("keeps exactly what decides the questions", () => {
    const requests = [
      { method: "elicitation/create", params: {} },
      { method: "elicitation/create", params: { mode: "url" } },
      { method: "sampling/createMessage", params: {} },
      { method: "sampling/createMessage", params: { tools: [{}] } },
      { method: "sampling/createMessage", params: { includeContext: "allServers" } },
      { method: "roots/list", params: {} },
    ];
    const declarations = [
      {},
      { elicitation: {} },
      { elicitation: { form: "yes" } },
      { elicitation: { url: {} } },
      { elicitation: { form: {}, url: {} }, sampling: { tools: {}, context: {} }, roots: { listChanged: true } },
      { sampling: {}, roots: [] },
      { sampling: { tools: true }, experimental: { x: 1 } },
    ];
    for (const declared of declarations.map(asDeclared)) {
      const kept = questionCapabilities(declared);
      for (const request of requests) {
        expect(missingInputCapability(request, kept), JSON.stringify([declared, request])).toBe(
          missingInputCapability(request, declared),
        );
      }
    }
    expect(questionCapabilities(asDeclared({ elicitation: {}, experimental: { big: {} } }))).toEqual({
      elicitation: { form: {} },
    });
  });
});

describe("missingInputCapability", () => {
  const form = { method: "elicitation/create", params: { message: "?" } };
  const url = { method: "elicitation/create", params: { mode: "url" } };
  const sampling = { method: "sampling/createMessage", params: { messages: [] } };
  const roots = { method: "roots/list", params: {} };

  it("answers what each declaration covers", () => {
    // null: the facade (the model answers), which takes any kind.
    for (const request of [form, url, sampling, roots]) expect(missingInputCapability(request, null)).toBeNull();
    expect(missingInputCapability(form, {})).toBe("elicitation.form");
    expect(missingInputCapability(url, {})).toBe("elicitation.url");
    expect(missingInputCapability(sampling, {})).toBe("sampling");
    expect(missingInputCapability(roots, {})).toBe("roots");
    // `elicitation: {}` is the older declaration: form mode only.
    expect(missingInputCapability(form, { elicitation: {} })).toBeNull();
    expect(missingInputCapability(url, { elicitation: {} })).toBe("elicitation.url");
    expect(missingInputCapability(form, { elicitation: { url: {} } })).toBe("elicitation.form");
    expect(missingInputCapability(url, { elicitation: { form: {}, url: {} } })).toBeNull();
    expect(missingInputCapability(sampling, { sampling: {} })).toBeNull();
    expect(missingInputCapability({ ...sampling, params: { tools: [] } }, { sampling: {} })).toBe("sampling.tools");
    expect(missingInputCapability({ ...sampling, params: { includeContext: "thisServer" } }, { sampling: {} })).toBe(
      "sampling.context",
    );
    expect(missingInputCapability({ ...sampling, params: { includeContext: "none" } }, { sampling: {} })).toBeNull();
    expect(missingInputCapability(roots, { roots: { listChanged: true } })).toBeNull();
  });
});

describe("the testing kit", () => {
  it("starts tasks as a client that can answer every kind of question, unless told to declare less", async () => {
    const asks = await kit.start("ask_kind", { kind: "sampling" });
    await asks.waitForStep("gate", "waiting");
    await asks.wake("gate");
    expect(Object.keys((await asks.waitFor("input_required")).inputRequests ?? {})).toEqual(["question"]);
    await asks.cancel();

    const cannot = await kit.start("ask_kind", { kind: "roots" }, { capabilities: {} });
    await cannot.waitForStep("gate", "waiting");
    await cannot.wake("gate");
    const ended = await cannot.waitFor("completed");
    expect(ended.inputRequests).toBeUndefined();
    expect((ended.result as { structuredContent?: { error?: unknown } }).structuredContent?.error).toMatchObject({
      code: "input_unavailable",
      details: { capability: "roots" },
    });
  });
});
