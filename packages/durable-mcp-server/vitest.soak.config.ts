// `pnpm explore:soak`: the exploration properties (test/explore/) on random seeds for as long as asked.
//   EXPLORE_SOAK_SECONDS (default 600), EXPLORE_SEED (the first seed; default random)
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./test/wrangler.jsonc" },
      miniflare: {
        bindings: {
          DURABLE_MCP_TESTING: true,
          EXPLORE_SOAK_SECONDS: process.env.EXPLORE_SOAK_SECONDS ?? "600",
          EXPLORE_SEED: process.env.EXPLORE_SEED ?? String(Math.floor(Math.random() * 2 ** 31)),
        },
      },
    }),
  ],
  test: {
    include: ["test/explore/**/*.soak.ts"],
    testTimeout: 0,
    reporters: ["default"],
  },
});
