import { DurableObject } from "cloudflare:workers";
import { BULK_DRIVER_RETRY_MS, BULK_RUN_TASKS, BULK_STALL_MS } from "../limits.js";
import type { RunnerClient } from "../tasks/runner-client.js";
import { auditRun, isStalled, readJob, runJob, type BulkJob } from "./bulk-cancel.js";

// The BulkDriver Durable Object: one per bulk job (named by its id). Its alarm runs the job slice by slice until it is
// done, so a job finishes with nobody reading it. The D1 job row stays the truth (progress, where it got to, the
// claim); the object keeps only the job's id, a mark while a slice runs, and the tasks that slice acted on until the
// slice's audit entry is written. A slice is one alarm invocation (BULK_RUN_TASKS tasks: one invocation's subrequest
// and D1 query limits), and the next alarm is armed at once. Before a slice the alarm is armed BULK_DRIVER_RETRY_MS
// ahead, and pushed on after each batch, so a driver evicted mid-slice takes the job up again by itself: the mark says
// its last slice died, so it claims the job at once (not after BULK_STALL_MS), files the dead slice's tasks in a
// `bulk_<action>_interrupted` audit entry, and runs on from the last batch saved.

/** The BulkDriver's RPC contract, as the operator API calls it. */
export interface BulkDriverRpc {
  /** Takes job `jobId` on (again is harmless): its alarm runs the next slice now. */
  drive(jobId: string): Promise<void>;
}

/**
 * The BulkDriver Durable Object class: runs bulk operator jobs to their end without a reader. Optional; export it
 * under the `class_name` of the binding `operator.driver` names (default "BULK_DRIVER", docs/deploy.md).
 * @example
 * ```ts
 * import { durableMcp, McpServer, type BulkDriverClass } from "durable-mcp-server";
 *
 * const mcp = durableMcp(() => new McpServer({ name: "reports", version: "1.0.0" }));
 * export const BulkDriver: BulkDriverClass<unknown> = mcp.BulkDriver;
 * ```
 */
export type BulkDriverClass<Env> = new (ctx: DurableObjectState, env: Env) => DurableObject<Env> & BulkDriverRpc;

export interface BulkDriverSettings<Env> {
  /** The catalog and the runners from the Worker's env, as the operator API has them. */
  deps: (env: Env) => { db: D1Database | undefined; runners: RunnerClient };
  /** Tasks per slice; BULK_RUN_TASKS unless a test makes it small. */
  sliceTasks?: number;
  /** Called after each batch's progress is saved (a test crashes the driver here). */
  afterBatch?: (ctx: DurableObjectState, job: BulkJob) => void | Promise<void>;
}

const JOB_KEY = "job";
/** Set while a slice runs: found set by an alarm, the slice before it died. */
const SLICE_KEY = "slice";
const ACTED_PREFIX = "acted:";
/** Keys one storage delete may take. */
const DELETE_CHUNK = 128;

export function defineBulkDriver<Env>(settings: BulkDriverSettings<Env>): BulkDriverClass<Env> {
  const sliceTasks = Math.max(1, Math.min(settings.sliceTasks ?? BULK_RUN_TASKS, BULK_RUN_TASKS));
  return class BulkDriver extends DurableObject<Env> implements BulkDriverRpc {
    /** This instance is running a slice now (an RPC arriving meanwhile must not move the alarm before it ends). */
    private sliceUnderWay = false;

    async drive(jobId: string): Promise<void> {
      const known = await this.ctx.storage.get<string>(JOB_KEY);
      if (known !== undefined && known !== jobId) throw new Error(`durableMcp: this BulkDriver drives job ${known}`);
      if (known === undefined) await this.ctx.storage.put(JOB_KEY, jobId);
      if (!this.sliceUnderWay) await this.ctx.storage.setAlarm(Date.now());
    }

    override async alarm(): Promise<void> {
      if (this.sliceUnderWay) return;
      const jobId = await this.ctx.storage.get<string>(JOB_KEY);
      if (jobId === undefined) return;
      const { db, runners } = settings.deps(this.env);
      if (!db) return this.finish();
      // The safety net, armed before anything can fail: should this invocation die, the job goes on without a reader.
      await this.arm(BULK_DRIVER_RETRY_MS);
      this.sliceUnderWay = true;
      try {
        await this.slice(db, runners, jobId);
      } catch (error) {
        // A D1 or storage call failed: the armed alarm takes the job up again, the mark left set.
        console.error("durableMcp: bulk job slice failed", {
          jobId,
          error: error instanceof Error ? error.stack : String(error),
        });
      } finally {
        this.sliceUnderWay = false;
      }
    }

    private async slice(db: D1Database, runners: RunnerClient, jobId: string): Promise<void> {
      const job = await readJob(db, jobId);
      if (!job || job.state === "done") return this.finish();
      const died = (await this.ctx.storage.get<number>(SLICE_KEY)) !== undefined;
      if (!died && job.state === "running" && !isStalled(job, Date.now())) {
        // Another run has it (a read, as where no driver is bound): look again when it would count as stalled.
        return this.ctx.storage.setAlarm(job.updatedAt + BULK_STALL_MS);
      }
      if (died) await this.fileInterrupted(db, job);
      await this.ctx.storage.put(SLICE_KEY, Date.now());
      let batch = 0;
      const ran = await runJob(db, runners, job, undefined, sliceTasks, async (progress, acted) => {
        if (acted.length > 0) await this.ctx.storage.put(`${ACTED_PREFIX}${String(batch++).padStart(8, "0")}`, acted);
        await this.arm(BULK_DRIVER_RETRY_MS);
        await settings.afterBatch?.(this.ctx, progress);
      });
      // The slice's own audit entry names its tasks now (or it lost the claim and acted on none).
      await this.clearSlice();
      if (ran.state === "done") return this.finish();
      // "running": another run claimed it first; "waiting": this slice ended, the next runs in a fresh invocation.
      await this.ctx.storage.setAlarm(ran.state === "running" ? ran.updatedAt + BULK_STALL_MS : Date.now());
    }

    /** The tasks a slice that died had acted on: audited now, as its own entry would have. */
    private async fileInterrupted(db: D1Database, job: BulkJob): Promise<void> {
      const kept = await this.ctx.storage.list<string[]>({ prefix: ACTED_PREFIX });
      const taskIds = [...kept.values()].flat();
      if (taskIds.length > 0) await auditRun(db, job, taskIds, true);
      await this.clearSlice([...kept.keys()]);
    }

    private async clearSlice(keys?: string[]): Promise<void> {
      const acted = keys ?? [...(await this.ctx.storage.list({ prefix: ACTED_PREFIX })).keys()];
      for (let i = 0; i < acted.length; i += DELETE_CHUNK) {
        await this.ctx.storage.delete(acted.slice(i, i + DELETE_CHUNK));
      }
      await this.ctx.storage.delete(SLICE_KEY);
    }

    private async arm(inMs: number): Promise<void> {
      await this.ctx.storage.setAlarm(Date.now() + inMs);
    }

    /** The job is done (or gone): nothing of it is kept here. */
    private async finish(): Promise<void> {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
    }
  };
}

/** Hands jobs to the BulkDriver bound as `binding`, or undefined where none is bound (jobs then advance on read). */
export function bulkDriverOf(
  env: unknown,
  binding: string | undefined,
): ((jobId: string) => Promise<void>) | undefined {
  if (!binding) return undefined;
  const namespace = (env as Record<string, unknown> | undefined)?.[binding] as DurableObjectNamespace | undefined;
  if (typeof namespace?.idFromName !== "function") return undefined;
  return (jobId) => (namespace.get(namespace.idFromName(jobId)) as unknown as BulkDriverRpc).drive(jobId);
}
