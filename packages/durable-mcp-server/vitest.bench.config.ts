import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Benchmarks run inside workerd like the tests, but only on demand: they print figures, they gate nothing.
export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./test/wrangler.jsonc" },
      // The catalog's migrations, as the tests apply them (bench/catalog-scale.bench.ts, bench/task-list.bench.ts).
      // BENCH_CATALOG_ROWS / BENCH_BULK_TASKS size the catalog scale bench (the shell's values, as bindings).
      miniflare: {
        bindings: {
          CATALOG_MIGRATIONS: await readD1Migrations("./migrations/catalog"),
          BENCH_CATALOG_ROWS: process.env.BENCH_CATALOG_ROWS ?? "",
          BENCH_BULK_TASKS: process.env.BENCH_BULK_TASKS ?? "",
        },
      },
    }),
  ],
  test: { include: ["bench/**/*.bench.ts"], testTimeout: 2_400_000, hookTimeout: 600_000 },
});
