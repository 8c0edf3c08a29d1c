import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Benchmarks run inside workerd like the tests, but only on demand: they print figures, they gate nothing.
export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: "./test/wrangler.jsonc" } })],
  test: { include: ["bench/**/*.bench.ts"], testTimeout: 120_000 },
});
