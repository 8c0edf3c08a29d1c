// A bench run's dated summary, written where git keeps it: results/ is ignored, so the figures docs/performance.md
// cites are written to docs/bench-results/<date>T<hhmm>Z-<section>.md (for people) and .json (every figure, every
// round), each naming the commit measured, the command, the machine and its load. A BENCH_QUICK run is a try-out,
// not a result: its summary goes to results/bench-results/ instead.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";
import { join, relative } from "node:path";
import { resultsDir } from "./history.ts";
import { workspaceRoot } from "./server.ts";

export const summariesDir = join(workspaceRoot, "docs", "bench-results");

function git(...args: string[]): string | null {
  try {
    return execFileSync("git", args, { cwd: workspaceRoot, encoding: "utf8", stdio: "pipe" }).trim();
  } catch {
    return null;
  }
}

/** A package's version; `from` names the package whose dependency it is (pnpm keeps it beside that one). */
function packageVersion(name: string, from?: string): string | null {
  try {
    const path = from
      ? join(realpathSync(join(workspaceRoot, "node_modules", from)), "..", name, "package.json")
      : join(workspaceRoot, "node_modules", name, "package.json");
    return (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
  } catch {
    return null;
  }
}

export interface RunSource {
  /** The commit measured (full hash), and whether the measured code differed from it. */
  commit: string | null;
  shortCommit: string | null;
  /** Uncommitted changes under the library's src/ or the bench server when the run started (null: none). */
  uncommitted: string[] | null;
  /** The command that reproduces the run, from the repository's root. */
  command: string;
  startedAt: string;
}

export interface Machine {
  cpuModel: string | null;
  cpus: number;
  memoryGiB: number;
  kernel: string;
  node: string;
  wrangler: string | null;
  workerd: string | null;
}

/** The BENCH_* variables that change what a run measures, as they were set. */
function benchEnv(): string {
  return Object.entries(process.env)
    .filter(([name]) => name.startsWith("BENCH_") || name.startsWith("GET_WAIT_"))
    .map(([name, value]) => `${name}=${value}`)
    .toSorted()
    .join(" ");
}

/** Who ran what: read at the start of a run (the commit may move while it runs). */
export function runSource(script: string): RunSource {
  const status = git("status", "--porcelain", "--", "packages/durable-mcp-server/src", "examples/bench-server");
  const env = benchEnv();
  return {
    commit: git("rev-parse", "HEAD"),
    shortCommit: git("rev-parse", "--short", "HEAD"),
    uncommitted: status ? status.split("\n") : null,
    command: `${env ? `${env} ` : ""}npx -y pnpm@12.4.2 --filter bench-server run ${script}`,
    startedAt: new Date().toISOString(),
  };
}

export function machine(): Machine {
  return {
    cpuModel: cpus()[0]?.model ?? null,
    cpus: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    wrangler: packageVersion("wrangler"),
    workerd: packageVersion("workerd", "wrangler"),
  };
}

export const load = (values: number[] = loadavg()) => values.map((value) => value.toFixed(2)).join(" ");

/**
 * Writes `<stamp>-<section>.json` (the whole `data`, with source and machine) and `.md` (`markdown` under a header
 * naming the commit, command, machine and load) and returns their paths relative to the repository.
 */
export function writeSummary(options: {
  section: string;
  quick: boolean;
  source: RunSource;
  machine: Machine;
  loadBefore: number[];
  loadAfter: number[];
  markdown: string;
  data: unknown;
}): { json: string; markdown: string } {
  const { section, quick, source } = options;
  const dir = quick ? join(resultsDir, "bench-results") : summariesDir;
  mkdirSync(dir, { recursive: true });
  // 2026-12-05T18:45:12.345Z → 2026-12-05T1845Z
  const stamp = `${source.startedAt.slice(0, 13)}${source.startedAt.slice(14, 16)}Z`;
  const base = join(dir, `${stamp}-${section}${quick ? "-quick" : ""}`);
  const m = options.machine;
  const header = [
    `# Bench run: ${section}, ${source.startedAt.slice(0, 16).replace("T", " ")} UTC${quick ? " (BENCH_QUICK: a try-out)" : ""}`,
    "",
    `- commit: \`${source.commit ?? "unknown"}\`${source.uncommitted ? ` with uncommitted changes: ${source.uncommitted.map((line) => `\`${line.trim()}\``).join(", ")}` : ""}`,
    `- command (from the repository's root): \`${source.command}\``,
    `- machine: ${m.cpus} × ${m.cpuModel ?? "?"}, ${m.memoryGiB} GiB, Linux ${m.kernel}; Node ${m.node}, wrangler ${m.wrangler ?? "?"}, workerd ${m.workerd ?? "?"} (local \`wrangler dev\`)`,
    `- load average (1, 5, 15 min): ${load(options.loadBefore)} at the start, ${load(options.loadAfter)} at the end`,
    `- every figure of every round: \`${relative(workspaceRoot, base)}.json\``,
    "",
  ].join("\n");
  writeFileSync(`${base}.md`, `${header}\n${options.markdown.trim()}\n`);
  const json = {
    section,
    quick,
    source,
    machine: m,
    loadBefore: options.loadBefore,
    loadAfter: options.loadAfter,
    data: options.data,
  };
  writeFileSync(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  return { json: relative(workspaceRoot, `${base}.json`), markdown: relative(workspaceRoot, `${base}.md`) };
}
