// The harness's own unit tests: plain Node, no server. Counts for the run's total (scripts/test-summary.mjs).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    silent: "passed-only",
    reporters: ["default", ["json", { outputFile: "../../results/tests/test-harness.json" }]],
  },
});
