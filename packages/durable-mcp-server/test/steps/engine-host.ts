// The EngineHost of tests that run the step engine straight on a StepJournal, without a TaskRunner around it: a task
// that is never cancelled, asks nothing, never hands off and drops its events. A test overrides what it looks at
// (its clock, its event sink, its cancel flag and controllers).
import type { EngineHost } from "../../src/steps/engine-host.js";
import type { StepJournal } from "../../src/steps/journal.js";

export function engineHost(journal: StepJournal, overrides: Partial<EngineHost> = {}): EngineHost {
  return {
    taskId: "task-engine-test",
    stepKeySalt: "engine-test-salt-0123456789abcdef0123456789ab",
    journal,
    now: () => Date.now(),
    isCancelled: () => false,
    setStatus: () => {},
    inputRequested: () => {},
    handoffAt: Number.POSITIVE_INFINITY,
    controllers: new Set(),
    event: () => {},
    ...overrides,
  };
}
