// The isolate's V8 heap while something runs, read through wrangler dev's inspector (port + 1000): a forced full
// collection and a reading before, `Runtime.getHeapUsage` asked back to back while `during` runs (each answer comes
// when the isolate next takes an inspector message, so the gaps between samples are reported too), and a forced
// collection after. Against the 128 MB a Worker isolate may use (docs/limits.md). Under `wrangler dev` the Worker
// and every Durable Object share the one isolate, so the figures are the whole isolate's: the baseline is what the
// rest holds, the peak less the baseline what the measured work added at most.
// Exported for any section that wants a peak (the 10,000-step task here; an upload can call it the same way).
import { DevToolsSession } from "@durable-mcp/test-harness";
import type { BenchServer } from "./server.ts";

/** A Worker isolate's memory limit (Cloudflare's platform limits: 128 MB per isolate). */
export const ISOLATE_LIMIT_BYTES = 128 * 1e6;

export interface HeapPeak<T> {
  value: T;
  /** Used heap after a forced full collection, before `during`. */
  baselineUsedBytes: number;
  /** The largest used and total (committed) heap any sample saw while `during` ran. */
  peakUsedBytes: number;
  peakTotalBytes: number;
  /**
   * The largest ArrayBuffer backing store any sample saw (`backingStorageSize`: buffers live outside the V8 heap
   * but count against the isolate's memory), or null when the inspector does not report it.
   */
  peakBackingBytes: number | null;
  /** The ArrayBuffer backing store after the forced collection before `during`, when reported. */
  baselineBackingBytes: number | null;
  /** Used heap after a forced full collection once `during` was done: what it left behind. */
  afterUsedBytes: number;
  samples: number;
  /** The longest time between two samples (a peak between them would not be seen), ms. */
  longestGapMs: number;
  durationMs: number;
}

interface HeapUsage {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}

/**
 * Runs `during` and samples the isolate's heap meanwhile. One DevTools connection is held throughout (wrangler's
 * proxy admits one at a time), so nothing else may hold one while this runs.
 */
export async function heapPeakDuring<T>(server: BenchServer, during: () => Promise<T>): Promise<HeapPeak<T>> {
  // The forced collection runs when the isolate next takes a request (test-harness `collectGarbage`).
  const nudge = () => fetch(`${server.origin}/floor/noop`).then((response) => response.text());
  const session = await DevToolsSession.open(server.spec.inspectorPort);
  try {
    const baseline = await session.collectGarbage(nudge);
    let peakUsed = baseline.usedSize;
    let peakTotal = baseline.totalSize;
    const baselineBacking = (baseline as HeapUsage).backingStorageSize ?? null;
    let peakBacking = baselineBacking;
    let samples = 0;
    let longestGapMs = 0;
    // Set once `during` is over (an object: the loop below reads it across awaits).
    const state = { done: false };
    const sampling = (async () => {
      let last = performance.now();
      while (!state.done) {
        const usage = await session.call<HeapUsage>("Runtime.getHeapUsage", {}, { nudge });
        const at = performance.now();
        longestGapMs = Math.max(longestGapMs, at - last);
        last = at;
        samples++;
        peakUsed = Math.max(peakUsed, usage.usedSize);
        peakTotal = Math.max(peakTotal, usage.totalSize);
        if (usage.backingStorageSize !== undefined) peakBacking = Math.max(peakBacking ?? 0, usage.backingStorageSize);
      }
    })();
    const begin = performance.now();
    let value: T;
    try {
      value = await during();
    } finally {
      state.done = true;
      await sampling;
    }
    const durationMs = performance.now() - begin;
    const after = await session.collectGarbage(nudge);
    return {
      value,
      baselineUsedBytes: baseline.usedSize,
      peakUsedBytes: peakUsed,
      peakTotalBytes: peakTotal,
      peakBackingBytes: peakBacking,
      baselineBackingBytes: baselineBacking,
      afterUsedBytes: after.usedSize,
      samples,
      longestGapMs,
      durationMs,
    };
  } finally {
    session.close();
  }
}

export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
