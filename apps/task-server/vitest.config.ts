// Over-the-wire e2e tests: real MCP clients against the demo Worker served by `wrangler dev` (see
// e2e/wrangler-server.ts). Plain Node, not the workers pool; one file at a time, since they share one server.
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The harness's MCP client is the library's (durable-mcp-server/testing/mcp-client): resolve the library to its
  // source like the rest of the workspace (docs/testing.md), before vite's default server conditions.
  ssr: { resolve: { conditions: ["durable-mcp-source", "module", "node", "development|production"] } },
  test: {
    include: ["e2e/**/*.test.ts"],
    globalSetup: ["e2e/wrangler-server.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 150_000,
    teardownTimeout: 30_000,
    // Console output only of failing tests; counts for the run's total (scripts/test-summary.mjs).
    silent: "passed-only",
    reporters: ["default", ["json", { outputFile: "../../results/tests/task-server.json" }]],
  },
});
