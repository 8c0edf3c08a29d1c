// Prints the one total of `npm test`: every suite's test cases and the conformance scenarios, from the reports the
// suites write into results/tests/ (vitest's JSON reporter, or `{ passed, failed }` from the scripted suites). A
// suite expected here that wrote no report counts as failed: a runner that crashed before reporting must not vanish
// from the total. Each failed test case is named under its suite with the first line of its failure: the end of a
// long CI log is often all a reader gets, and a flake that cannot be named cannot be fixed. Plain Node on purpose:
// it runs after nx, whatever nx's exit code was.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const dir = join(import.meta.dirname, "../results/tests");
const expected = [
  "durable-mcp-server",
  "report-task",
  "task-server",
  "demo-client",
  "reliability-lab",
  "conformance-server",
  "bench-server",
  "install-check",
  "test-harness",
];

const root = join(import.meta.dirname, "..");

/** The failed test cases (and test files that failed outside any case) of a vitest JSON report, a line each. */
function failuresOf(report) {
  const out = [];
  for (const file of report.testResults ?? []) {
    const where = relative(root, file.name ?? "");
    const failedCases = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    for (const test of failedCases) out.push(`${where} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
    if (failedCases.length === 0 && file.status === "failed") out.push(`${where}: ${firstLine(file.message)}`);
  }
  return out;
}

function firstLine(text) {
  const line = (text ?? "").split("\n").find((each) => each.trim() !== "") ?? "(no message)";
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

function countsOf(report) {
  if (typeof report.numTotalTests === "number") {
    return {
      passed: report.numPassedTests,
      failed: report.numFailedTests + (report.success === false && report.numFailedTests === 0 ? 1 : 0),
      skipped: report.numPendingTests + report.numTodoTests,
    };
  }
  return { passed: report.passed ?? 0, failed: report.failed ?? 0, skipped: 0 };
}

const found = existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".json")) : [];
const suites = new Map(found.map((name) => [name.replace(/\.json$/, ""), join(dir, name)]));
let passed = 0;
let failed = 0;
let skipped = 0;
const lines = [];
for (const name of [...new Set([...expected, ...suites.keys()])]) {
  const file = suites.get(name);
  if (!file) {
    failed += 1;
    lines.push(`  ${name}: no report (the suite did not run or crashed before reporting)`);
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  const counts = countsOf(report);
  passed += counts.passed;
  failed += counts.failed;
  skipped += counts.skipped;
  const extra = counts.skipped ? `, ${counts.skipped} skipped` : "";
  lines.push(`  ${name}: ${counts.passed} passed, ${counts.failed} failed${extra}`);
  for (const failure of failuresOf(report)) lines.push(`    failed: ${failure}`);
}
// nx's own verdict (passed by scripts/test.sh): a target can fail with every test case passing, e.g. on an unhandled
// error outside any test (vitest's JSON report does not count those), or in build, typecheck or lint.
const targetsFailed = process.argv.includes("--targets-failed");
if (targetsFailed) lines.push('  and nx reported failed targets (see "Failed tasks" above): the run failed');
console.log(["", "npm test:", ...lines].join("\n"));
console.log(
  `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}${targetsFailed ? ", run FAILED" : ""}`,
);
process.exitCode = failed > 0 || targetsFailed ? 1 : 0;
