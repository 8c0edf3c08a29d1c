// The tables `pnpm bench` prints: the floor, the library over the wire, steps, payloads, resume, concurrency and event
// logging. The targets table is bench/targets.ts; the step engine's rows are bench/steps.ts.
import type { Floor } from "./floor.ts";
import { ms, ratio, table, type Summary } from "./stats.ts";
import type { Defaults, StepEvents, Wire } from "./wire.ts";

const row = (name: string, s: Summary, versus?: number) => [
  name,
  ms(s.p50),
  ms(s.p99),
  versus === undefined ? "" : ratio(s.p50 / versus),
];

export const print = (title: string, rows: string[][]) => console.log(`\n${title}\n\n${table(rows)}`);

export function report(floor: Floor, wire: Wire, defaults: Defaults, stepEvents: StepEvents) {
  const http = floor.http.p50;
  print("Floor: the platform in the same workerd (ratio: p50 / HTTP + 1 DO call)", [
    ["measure", "p50", "p99", "ratio"],
    row("HTTP request, Worker only", floor.httpWorkerOnly, http),
    row("HTTP request + 1 DO call (the HTTP floor)", floor.http, http),
    row("HTTP request + 1 call to a new DO", floor.httpNewObject, http),
    row("HTTP request + new DO + its first row committed", floor.httpNewObjectFirstRow, http),
    ["Worker→DO RPC, inside the Worker", ms(floor.rpcMs), "", ""],
    row("Alarm dispatch: setAlarm(now) → alarm() runs", floor.alarmDispatch, http),
    ["SQLite INSERT, coalesced: batch wall time / N", ms(floor.insertCoalesced.outsideMs), "", ""],
    ["SQLite INSERT, coalesced: loop time inside / N", ms(floor.insertCoalesced.insideMs), "", ""],
    ["SQLite INSERT + awaited storage.sync() (inside)", ms(floor.insertSynced.insideMs), "", ""],
    ...floor.insertCoalescedByPayload.map((p) => [`SQLite INSERT of ${p.bytes} B, coalesced`, ms(p.outsideMs), "", ""]),
  ]);
  print(
    "durable-mcp-server over the wire on /mcp-quiet (events: none), Tasks extension declared (ratio: p50 / HTTP floor)",
    [
      ["measure", "p50", "p99", "ratio"],
      row("server/discover (MCP request, no DO)", wire.discover, http),
      row("create: tools/call → task handle", wire.create, http),
      row("one-step task: create → completed (listen)", wire.oneStepRoundTrip, http),
      row("one-step task: create → completed (polling)", wire.oneStepRoundTripPolling, http),
      row(
        `one-step task, inline: tools/call → result (${wire.oneStepInline.asTask}/${wire.oneStepInline.calls} as a task)`,
        wire.oneStepInline.roundTrip,
        http,
      ),
      row("tasks/get, completed task", wire.tasksGetCompleted, http),
      row("  HTTP floor, interleaved with those gets", wire.getVsFloor.httpFloor, http),
      row("  POST floor: the same request to /floor/http-post, interleaved", wire.getVsFloor.postFloor, http),
      row("tasks/get, input_required task", wire.tasksGetInputRequired, http),
      row("input round: tasks/update → completed", wire.inputRound, http),
    ],
  );
  print("Steps per task (create → completed; each run paired with a one-step task, medians)", [
    ["steps", "one-step task", "this task", "per step over the one-step task"],
    ...wire.bySteps.map((r) => [String(r.steps), ms(r.oneStepMs), ms(r.totalMs), ms(r.perStepMs)]),
  ]);
  print("Payload (each step returns payloadBytes characters; 100 steps paired with 1, medians)", [
    ["payload", "1 step", "100 steps", "per step", "coalesced INSERT of that size"],
    ...wire.byPayload.map((r) => [
      `${r.payloadBytes} B`,
      ms(r.oneStepMs),
      ms(r.hundredStepsMs),
      ms(r.perStepMs),
      ms(
        floor.insertCoalescedByPayload.find((p) => p.bytes === r.payloadBytes)?.outsideMs ??
          floor.insertCoalesced.outsideMs,
      ),
    ]),
  ]);
  print(`Resume after a ${wire.replay.sleepMs} ms sleep (medians)`, [
    ["journaled steps", "replay in the resumed run", "without sleep", "with sleep", "wire: with − without − sleep"],
    ...wire.replay.rows.map((r) => [
      String(r.before),
      ms(r.replayMs),
      ms(r.noSleepMs),
      ms(r.withSleepMs),
      ms(r.resumeMs),
    ]),
  ]);
  console.log(`replay in the resumed run: ${ms(wire.replay.perReplayedStepMs)} per journaled step`);
  print("Concurrent tasks × 50 steps (first tools/call → last completion, median)", [
    ["tasks", "wall", "steps/s"],
    ...wire.concurrency.map((r) => [String(r.tasks), ms(r.wallMs), r.stepsPerSecond.toFixed(0)]),
  ]);
  print("Event logging: none (/mcp-quiet), the library's default (/mcp), every step (/mcp-step-events)", [
    ["measure", "events: none", "defaults", 'events: "all"'],
    ["create p50", ms(wire.create.p50), ms(defaults.create.p50), ""],
    ["one-step task round trip p50", ms(wire.oneStepRoundTrip.p50), ms(defaults.oneStepRoundTrip.p50), ""],
    ["tasks/get p50", ms(wire.tasksGetCompleted.p50), ms(defaults.tasksGetCompleted.p50), ""],
    [
      "per step (100 steps vs 1)",
      ms(wire.bySteps.find((r) => r.steps === 100)!.perStepMs),
      "",
      ms(stepEvents.perStepMs),
    ],
    ["per step (1000 steps vs 1)", ms(wire.perStepMs), ms(defaults.perStepMs), ""],
    [
      "20 parallel tasks × 50 steps",
      `${wire.concurrency.find((r) => r.tasks === 20)!.stepsPerSecond.toFixed(0)} steps/s`,
      `${defaults.parallel20x50.stepsPerSecond.toFixed(0)} steps/s`,
      "",
    ],
    ["one console.log line (floor)", "", "", ms(stepEvents.logLineMs)],
  ]);
}
