// The tests of the package's own checks (scripts/*.test.mjs) and of the console app's pure modules
// (console-app/src/*.test.ts): plain Node, not workerd. Run by the `lint` target,
// after the checks themselves; counts for the run's total (scripts/test-summary.mjs at the root).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["scripts/**/*.test.mjs", "console-app/src/**/*.test.ts"],
    testTimeout: 120_000,
    silent: "passed-only",
    reporters: ["default", ["json", { outputFile: "../../results/tests/durable-mcp-server-scripts.json" }]],
  },
});
