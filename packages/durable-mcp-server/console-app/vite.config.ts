// The console's build (scripts/build-console.mjs runs it and inlines the result into
// src/console/console-page.generated.ts): one JS chunk and one stylesheet, no module-preload polyfill (it would be a
// second inline script), nothing left as a separate asset, so the page is one HTML document under a strict CSP.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "./",
  plugins: [react()],
  logLevel: "warn",
  build: {
    outDir: process.env.CONSOLE_OUT_DIR ?? "dist",
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    assetsInlineLimit: Number.MAX_SAFE_INTEGER,
    sourcemap: false,
  },
});
