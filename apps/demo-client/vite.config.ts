// The task page: a static React app (its MCP client is the TaskWatcher agent, agent/, which the demo Worker bundles
// with wrangler). `vite build` writes dist/ (the nx build target); `npm start` builds it into www/, the folder the
// root wrangler.jsonc serves as the demo Worker's static assets. Plain Vite, not @cloudflare/vite-plugin: that plugin
// would build and serve the Worker itself, while `npm start`, the tests and `wrangler deploy` run the root config.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true },
});
