// What every part of `pnpm bench` shares: the port, the iteration scale, a clock, a log line, and two loops.
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
