// Deploys under tasks in flight: `wrangler dev` serves the deploy Worker (src/deploy-worker.ts, from an edited copy),
// is stopped while tasks sleep, and started again on the same local state with edited task code, as a deploy
// replaces the code under sleeping tasks. Checked over the wire, with every step body counted by the counter
// service: a finished step renamed under a sleeping task ends it `failed` with `replay_divergence` when its handler
// returns (the default replay rule catches a rename only then: the new bodies ran once each); a patch marker (`step.patched`) keeps tasks already past it on the old path and gives new ones
// the new path, across a restart; a step name used five times across a sleep and a restart runs five bodies once each.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  FINAL,
  McpHttpClient,
  sleep,
  startWranglerDev,
  type JsonObject,
  type Task,
  type WranglerDev,
} from "@durable-mcp/test-harness";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { hitsByJob, type Hit } from "./counter.ts";
import { LAB_PORT } from "./wrangler.ts";

const counterUrl = inject("counterUrl");
const labRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** Inside the lab, so that the copy resolves `durable-mcp-server` and `zod` from the lab's node_modules. */
const siteDir = join(labRoot, `.deploy-suite-${process.pid}`);
const source = readFileSync(join(labRoot, "src/deploy-worker.ts"), "utf8");
const RUN = `deploy-${Date.now().toString(36)}`;
/** Long enough for the suite to stop the server while tasks sleep; they wake after the next start. */
const PAUSE_MS = 4_000;

/** The code of the next deploy: the Worker's source with these exact lines replaced (each must be there). */
function edited(edits: Array<[string, string]>): string {
  let code = source;
  for (const [from, to] of edits) {
    if (!code.includes(from)) throw new Error(`deploy suite: src/deploy-worker.ts no longer has the line ${from}`);
    code = code.replace(from, to);
  }
  return code;
}

const RENAME: [string, string] = [
  'const path = [await step.do("first", effect(job, "first"))]; // edited by the deploy suite',
  'const path = [await step.do("first renamed", effect(job, "first renamed"))];',
];
const PATCH: [string, string] = [
  'path.push(await step.do("b", effect(job, "b"))); // edited by the deploy suite',
  `path.push(
      (await step.patched("b2 instead of b"))
        ? await step.do("b2", effect(job, "b2"))
        : await step.do("b", effect(job, "b")),
    );`,
];

function deploy(code: string): void {
  writeFileSync(join(siteDir, "worker.ts"), code);
}

const client = (server: WranglerDev) =>
  new McpHttpClient(server.url, { clientInfo: { name: "deploy-suite", version: "1.0.0" }, timeoutMs: 30_000 });

async function start(server: WranglerDev, tool: string, job: string): Promise<Task> {
  return client(server).startTask(tool, { job: `${RUN}-${job}`, pauseMs: PAUSE_MS });
}

/** The task's step timeline (tasks/get with `_meta["durable-mcp-server/steps"]`). */
async function timeline(server: WranglerDev, taskId: string): Promise<Array<{ name: string; state: string }>> {
  const mcp = client(server);
  const task = await mcp.call("tasks/get", {
    taskId,
    _meta: { ...mcp.envelope(), "durable-mcp-server/steps": true } as JsonObject,
  });
  const meta = task._meta as { "durable-mcp-server/steps"?: { steps: Array<{ name: string; state: string }> } };
  return meta["durable-mcp-server/steps"]?.steps ?? [];
}

async function untilSleeping(server: WranglerDev, taskIds: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (const taskId of taskIds) {
    while (!(await timeline(server, taskId)).some((step) => step.name === "pause" && step.state === "waiting")) {
      if (Date.now() > deadline) throw new Error(`task ${taskId} did not reach its sleep`);
      await sleep(50);
    }
  }
}

async function final(server: WranglerDev, taskId: string): Promise<Task> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const task = await client(server).getTask(taskId);
    if (FINAL.has(task.status)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} is still ${task.status}`);
    await sleep(100);
  }
}

async function hits(job: string): Promise<Hit[]> {
  return (await hitsByJob(counterUrl, [`${RUN}-${job}`])).get(`${RUN}-${job}`)!;
}
const runsOf = (all: Hit[], step: string) => all.filter((hit) => hit.step === step).length;
const text = (task: Task) => task.result?.content?.[0]?.text;

describe("deploys under tasks in flight: wrangler dev restarted with edited task code on the same state", () => {
  let server: WranglerDev | undefined;

  beforeAll(async () => {
    mkdirSync(siteDir, { recursive: true });
    const config = readFileSync(join(labRoot, "wrangler.deploy.jsonc"), "utf8").replace(
      '"main": "src/deploy-worker.ts"',
      '"main": "worker.ts"',
    );
    writeFileSync(join(siteDir, "wrangler.jsonc"), config);
    deploy(source);
    server = await startWranglerDev({
      name: "reliability-lab-deploy",
      cwd: siteDir,
      port: LAB_PORT,
      portHint: "set RELIABILITY_PORT",
      // Not prebuilt: every start bundles the copy as it is then, which is what makes an edit a deploy.
      argsFor: ({ instance }) => ["--var", `COUNTER_URL:${counterUrl}`, "--var", `INSTANCE:${instance}`],
      readyTimeoutMs: 90_000,
      readyPollMs: 100,
    });
  });

  afterAll(async () => {
    try {
      await server?.dispose();
    } finally {
      rmSync(siteDir, { recursive: true, force: true });
    }
  });

  it("refuses a renamed finished step, keeps old tasks on the old path of a patch, and runs repeated names once each", async () => {
    const lab = server!;
    // Deploy 1 (the code as written): three tasks go to sleep.
    const renamed = await start(lab, "rename_job", "rename");
    const old = await start(lab, "patch_job", "patch-old");
    const repeated = await start(lab, "repeat_job", "repeat");
    await untilSleeping(lab, [renamed.taskId, old.taskId, repeated.taskId]);

    // Deploy 2, while they sleep: "first" renamed, and "b" wrapped in a patch marker.
    await lab.stop("SIGKILL");
    deploy(edited([RENAME, PATCH]));
    await lab.start();

    const refused = await final(lab, renamed.taskId);
    expect(refused.status).toBe("failed");
    expect(refused.error).toMatchObject({
      code: -32603,
      data: { reason: "replay_divergence", step: "first renamed", journaled: "first" },
    });
    const renamedHits = await hits("rename");
    expect(runsOf(renamedHits, "first")).toBe(1);
    expect(runsOf(renamedHits, "first renamed")).toBe(1);
    expect(runsOf(renamedHits, "last")).toBe(1);

    // Past the patch point on the old code: the old path, each body once.
    const kept = await final(lab, old.taskId);
    expect(kept.status).toBe("completed");
    expect(text(kept)).toBe("a,b,c");
    const oldHits = await hits("patch-old");
    expect(["a", "b", "b2", "c"].map((step) => runsOf(oldHits, step))).toEqual([1, 1, 0, 1]);

    // One name, five uses across the sleep and the restart: five bodies, each once, each with its own key.
    const five = await final(lab, repeated.taskId);
    expect(five.status).toBe("completed");
    expect(text(five)).toBe(Array(5).fill("same name").join(","));
    const repeatHits = await hits("repeat");
    expect(repeatHits).toHaveLength(5);
    expect(new Set(repeatHits.map((hit) => hit.key)).size).toBe(5);
    expect(repeatHits.map((hit) => hit.instance)).toEqual([1, 1, 1, 2, 2]);

    // A task started on the patched code takes the new path; a restart during its sleep replays the marker.
    const fresh = await start(lab, "patch_job", "patch-new");
    await untilSleeping(lab, [fresh.taskId]);
    await lab.stop("SIGKILL");
    await lab.start();
    const patched = await final(lab, fresh.taskId);
    expect(patched.status).toBe("completed");
    expect(text(patched)).toBe("a,b2,c");
    const newHits = await hits("patch-new");
    expect(["a", "b", "b2", "c"].map((step) => runsOf(newHits, step))).toEqual([1, 0, 1, 1]);
    console.log(
      `deploy suite: ${JSON.stringify({ instances: lab.instance, refused: refused.error, oldPath: text(kept), newPath: text(patched) })}`,
    );
  });
});
