// The tests of the package's own checks (scripts/*.test.mjs): plain Node, not workerd. Run by the `lint` target,
// after the checks themselves; counts for the run's total (scripts/test-summary.mjs at the root).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["scripts/**/*.test.mjs"],
    testTimeout: 120_000,
    silent: "passed-only",
    reporters: ["default", ["json", { outputFile: "../../results/tests/durable-mcp-server-scripts.json" }]],
  },
});
