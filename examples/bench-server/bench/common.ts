// What every part of `pnpm bench` shares: the port, the iteration scale, a clock, a log line, two loops, and a
// process's CPU time.
import { readFileSync } from "node:fs";

export const port = Number(process.env.BENCH_PORT ?? 8795);
/** BENCH_QUICK=1: a fifth of the iterations, to try the driver out. */
export const scale = process.env.BENCH_QUICK === "1" ? 0.2 : 1;
export const times = (n: number) => Math.max(1, Math.round(n * scale));
export const now = () => performance.now();
export const log = (message: string) => console.log(`[bench] ${message}`);

export async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const begin = now();
  const value = await fn();
  return [now() - begin, value];
}

export async function repeat(n: number, fn: (i: number) => Promise<number>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await fn(i));
  return samples;
}

/**
 * CPU seconds of a process so far: utime + stime, fields 14 and 15 of /proc/<pid>/stat (the 12th and 13th after the
 * comm's ')'), in clock ticks of 10 ms. 0 for a process that has exited (the run fails on its next request anyway).
 */
export function cpuSeconds(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return 0;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
