// The crash, load and files suites: plain Node tests driving the lab Worker under `wrangler dev` (test/wrangler.ts) on
// one port, so one file at a time. The counter service the Worker reports to runs in this process (test/counter.ts).
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The harness's MCP client is the library's (durable-mcp-server/testing/mcp-client): resolve the library to its
  // source like the rest of the workspace (docs/testing.md), before vite's default server conditions.
  ssr: { resolve: { conditions: ["durable-mcp-source", "module", "node", "development|production"] } },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/counter.ts"],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // Not silent: the suites print their seeds and measured figures (MB/s, timings) on green runs too. Counts for the
    // run's total (scripts/test-summary.mjs).
    reporters: ["default", ["json", { outputFile: "../../results/tests/reliability-lab.json" }]],
  },
});
