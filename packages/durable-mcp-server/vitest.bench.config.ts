import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Benchmarks run inside workerd like the tests, but only on demand: they print figures, they gate nothing.
export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./test/wrangler.jsonc" },
      // The catalog's migrations, as the tests apply them (bench/catalog-scale.bench.ts, bench/task-list.bench.ts).
      miniflare: { bindings: { CATALOG_MIGRATIONS: await readD1Migrations("./migrations/catalog") } },
    }),
  ],
  test: { include: ["bench/**/*.bench.ts"], testTimeout: 600_000, hookTimeout: 600_000 },
});
