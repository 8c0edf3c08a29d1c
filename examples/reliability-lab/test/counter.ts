// The counter service: a tiny HTTP server outside the Worker that every step execution of the lab Worker reports
// to (`POST /hit`). It records every hit, never deduplicating, so the suites can count how often each step body
// ran. Started by vitest's global setup in the main process; the suites read it over HTTP (`GET /hits`).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";

/** One execution of one step body, as the counter received it. */
export interface Hit {
  /** The step's idempotency key: opaque, one per task and step, the same on every attempt. */
  key: string;
  /** The job (LabJobArgs.job) and step the execution belongs to. */
  job: string;
  step: string;
  attempt: number;
  /** The `wrangler dev` instance that ran it (1 for the first start, +1 on every restart). */
  instance: number;
  /** Arrival order over the whole run: within one task, the order in which its step bodies ran. */
  seq: number;
  /** Arrival time (ms since epoch). */
  at: number;
}

declare module "vitest" {
  export interface ProvidedContext {
    counterUrl: string;
  }
}

/** How long the counter keeps an idle connection open: longer than any suite runs (see startCounter). */
export const COUNTER_KEEP_ALIVE_MS = 30 * 60_000;

export function startCounter(): Promise<Server> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    if (req.method === "POST" && req.url === "/hit") {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Partial<Hit>;
          if (
            typeof body.key !== "string" ||
            typeof body.job !== "string" ||
            typeof body.step !== "string" ||
            typeof body.attempt !== "number" ||
            typeof body.instance !== "number"
          ) {
            throw new Error("a hit needs key, job, step, attempt and instance");
          }
          if (req.headers["idempotency-key"] !== body.key)
            throw new Error("the Idempotency-Key header must be the key");
          hits.push({
            key: body.key,
            job: body.job,
            step: body.step,
            attempt: body.attempt,
            instance: body.instance,
            seq: hits.length,
            at: Date.now(),
          });
          res.writeHead(204).end();
        } catch (error) {
          res.writeHead(400, { "content-type": "text/plain" }).end(String(error));
        }
      });
      return;
    }
    if (req.method === "GET" && req.url === "/hits") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(hits));
      return;
    }
    res.writeHead(404).end();
  });
  // workerd keeps its connections to the counter open between hits and reuses them. Node closes a connection idle
  // for keepAliveTimeout (5 s by default); a hit workerd sends on one as Node closes it is lost ("Network connection
  // lost.": the step's report fails and the step retries, so its attempt 1 is missing from the record), which on a
  // loaded machine, where hits come in bursts with pauses between, happened tens of times a run. Idle connections
  // therefore stay open for the whole run; the teardown closes them.
  server.keepAliveTimeout = COUNTER_KEEP_ALIVE_MS;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

/** Every hit so far whose job is one of `jobs`, grouped by job, in arrival order. */
export async function hitsByJob(counterUrl: string, jobs: Iterable<string>): Promise<Map<string, Hit[]>> {
  const response = await fetch(`${counterUrl}/hits`);
  if (!response.ok) throw new Error(`counter: HTTP ${response.status}`);
  const all = (await response.json()) as Hit[];
  const byJob = new Map<string, Hit[]>();
  for (const job of jobs) byJob.set(job, []);
  for (const hit of all) byJob.get(hit.job)?.push(hit);
  return byJob;
}

/** The step name of a hit. */
export const stepOf = (hit: Hit) => hit.step;

export default async function setup(project: TestProject) {
  const server = await startCounter();
  const { port } = server.address() as AddressInfo;
  project.provide("counterUrl", `http://127.0.0.1:${port}`);
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      // The connections kept open (keepAliveTimeout) would otherwise hold close() up.
      server.closeAllConnections();
    });
}
