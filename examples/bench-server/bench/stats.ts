// Small statistics and formatting helpers for the bench driver.

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank quantile of already sorted samples. */
export function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function summarize(samples: number[]): Summary {
  if (samples.length === 0) throw new Error("no samples");
  const sorted = samples.toSorted((a, b) => a - b);
  return {
    n: sorted.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
    min: sorted[0]!,
    max: sorted.at(-1)!,
  };
}

export const median = (samples: number[]) => summarize(samples).p50;

/** Milliseconds, to a sensible precision. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return `${value.toFixed(0)} ms`;
  if (abs >= 10) return `${value.toFixed(1)} ms`;
  if (abs >= 1) return `${value.toFixed(2)} ms`;
  if (abs >= 0.1) return `${value.toFixed(3)} ms`;
  return `${(value * 1000).toFixed(1)} µs`;
}

export const ratio = (value: number) => `${value.toFixed(2)}×`;

/** A plain-text table with aligned columns (the first row is the header). */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  const line = (row: string[]) => row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ");
  return [line(rows[0]!), widths.map((width) => "-".repeat(width)).join("  "), ...rows.slice(1).map(line)].join("\n");
}
