// The browser test: Debian chromium driven by playwright-core against the built page, served with the demo Worker
// by `wrangler dev` (test/setup.ts). Plain Node, one file.
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The harness's MCP client is the library's (durable-mcp-server/testing/mcp-client): resolve the library to its
  // source like the rest of the workspace (docs/testing.md), before vite's default server conditions.
  ssr: { resolve: { conditions: ["durable-mcp-source", "module", "node", "development|production"] } },
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/setup.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    // The first run on a fresh machine installs chromium (apt-get) before wrangler starts.
    hookTimeout: 600_000,
    teardownTimeout: 30_000,
    // Console output only of failing tests; counts for the run's total (scripts/test-summary.mjs).
    silent: "passed-only",
    reporters: ["default", ["json", { outputFile: "../../results/tests/demo-client.json" }]],
  },
});
