// The bench's local history: every run of `pnpm bench` and of `pnpm bench:steps` is appended as one JSON line to its
// file under results/ (gitignored), and the run before it is read back so that each prints the previous figures
// next to the new ones. One mechanism for both; the entries share their header (when, which commit, the load).
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { workspaceRoot } from "./server.ts";

export const resultsDir = join(workspaceRoot, "results");

/** What every history line starts with. */
export interface RunHeader {
  date: string;
  commit: string | null;
  /** Names the build measured when runs are interleaved (e.g. before/after a change): BENCH_LABEL. */
  label: string | null;
  quick: boolean;
  loadBefore: number[];
  loadAfter: number[];
}

function git(...args: string[]): string | null {
  try {
    return execFileSync("git", args, { cwd: workspaceRoot, encoding: "utf8", stdio: "pipe" }).trim();
  } catch {
    return null;
  }
}

export const gitCommit = () => git("rev-parse", "--short", "HEAD");

/** The run measured a library that differs from its commit (say so: the commit alone does not name the build). */
export const libraryUncommittedChanges = () =>
  (git("status", "--porcelain", "--", "packages/durable-mcp-server/src") ?? "") !== "";

/** A run's header; `loadBefore` is the load average when the run started. */
export function runHeader(loadBefore: number[], quick: boolean): RunHeader {
  return {
    date: new Date().toISOString(),
    commit: gitCommit(),
    label: process.env.BENCH_LABEL ?? null,
    quick,
    loadBefore,
    loadAfter: loadavg(),
  };
}

export class History<T extends RunHeader> {
  readonly file: string;

  /** `name`: the file under results/, e.g. "bench-history.jsonl". */
  constructor(name: string) {
    this.file = join(resultsDir, name);
  }

  /** The last run recorded, or null on a fresh clone; a line that does not parse (a run cut off) is skipped. */
  previous(): T | null {
    if (!existsSync(this.file)) return null;
    const lines = readFileSync(this.file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "");
    for (const line of lines.toReversed()) {
      try {
        return JSON.parse(line) as T;
      } catch {
        console.warn(`[bench] ${this.file}: skipped a line that is not JSON`);
      }
    }
    return null;
  }

  append(entry: T): void {
    mkdirSync(dirname(this.file), { recursive: true });
    appendFileSync(this.file, `${JSON.stringify(entry)}\n`);
  }
}

/** How the previous run is named above its column. */
export function describePrevious(previous: RunHeader | null): string {
  if (!previous) return "no previous run";
  const label = previous.label ? ` "${previous.label}"` : "";
  return `previous run${label}: ${previous.date.slice(0, 16).replace("T", " ")} UTC, ${previous.commit ?? "?"}, load ${previous.loadBefore.map((l) => l.toFixed(2)).join(" ")}${previous.quick ? ", quick" : ""}`;
}
