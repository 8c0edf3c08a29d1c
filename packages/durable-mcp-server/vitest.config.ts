import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      // The fixture Worker exports its TaskRunner with the test-only seam (withTestingSeam, docs/testing.md).
      wrangler: { configPath: "./test/wrangler.jsonc" },
      // The catalog's migrations, applied by the tests that use its D1 database (applyD1Migrations).
      miniflare: {
        bindings: {
          CATALOG_MIGRATIONS: await readD1Migrations("./migrations/catalog"),
        },
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // Console output only of failing tests; counts for the run's total (scripts/test-summary.mjs).
    silent: "passed-only",
    reporters: ["default", ["json", { outputFile: "../../results/tests/durable-mcp-server.json" }]],
  },
});
