// The task page: a static React app. `vite build` writes dist/ (the nx build target); `npm start` builds it into
// www/, the folder the root wrangler.jsonc serves as the demo Worker's static assets.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true },
});
