import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.jsonc" },
      // Only under tests: the Worker with the TaskRunner that lets durable-mcp-server/testing make sleeps due now and
      // mock steps (test/worker.ts); what you deploy is wrangler.jsonc's `main`.
      main: "./test/worker.ts",
    }),
  ],
  // Resolve packages as `wrangler dev` and `wrangler deploy` would: wrangler's own WRANGLER_BUILD_CONDITIONS, when set,
  // adds resolve conditions (the repository this starter comes from uses it to run it on the library's source).
  ssr: { resolve: { conditions: process.env["WRANGLER_BUILD_CONDITIONS"]?.split(",") ?? [] } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // Console output only of failing tests.
    silent: "passed-only",
    // Counts for a run's total, when a test command asks for them in TEST_REPORT_DIR.
    reporters: process.env["TEST_REPORT_DIR"]
      ? ["default", ["json", { outputFile: `${process.env["TEST_REPORT_DIR"]}/${process.env["npm_package_name"]}.json` }]]
      : ["default"],
  },
});
