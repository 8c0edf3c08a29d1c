import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.jsonc" } })],
  // The workspace's library from its TypeScript source (no build first); see tsconfig.base.json.
  ssr: { resolve: { conditions: ["durable-mcp-source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // Console output only of failing tests; counts for the run's total (scripts/test-summary.mjs).
    silent: "passed-only",
    reporters: ["default", ["json", { outputFile: "../../results/tests/report-task.json" }]],
  },
});
