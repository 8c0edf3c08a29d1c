// Two projects, run by the `test` target in this order:
// - unit: the page's pure helpers (schema-to-form, formatting, the agent-call queue, the card's reading of a
//   snapshot) in plain Node: no browser, no server, seconds. `vitest run --project unit` runs only these.
// - browser: Debian chromium driven by playwright-core against the built page, served with the demo Worker by
//   `wrangler dev` (test/setup.ts, a globalSetup of this project only, so the unit project never starts it).
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The harness's MCP client is the library's (durable-mcp-server/testing/mcp-client): resolve the library to its
  // source like the rest of the workspace (docs/testing.md), before vite's default server conditions.
  ssr: { resolve: { conditions: ["durable-mcp-source", "module", "node", "development|production"] } },
  test: {
    // Console output only of failing tests; counts for the run's total (scripts/test-summary.mjs).
    silent: "passed-only",
    // The browser project's `wrangler dev` stops within this when vitest shuts down.
    teardownTimeout: 30_000,
    reporters: ["default", ["json", { outputFile: "../../results/tests/demo-client.json" }]],
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: ["test/*.test.ts"],
          globalSetup: ["test/setup.ts"],
          fileParallelism: false,
          testTimeout: 120_000,
          // The first run on a fresh machine installs chromium (apt-get) before wrangler starts.
          hookTimeout: 600_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
