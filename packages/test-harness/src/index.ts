// @durable-mcp/test-harness: what every over-the-wire suite of the workspace shares. `wrangler.ts` serves a Worker
// under `wrangler dev` (its own process group and watchdog, fresh state, crash and restart on the same state);
// `processes.ts` reads and stops its processes (/proc); `mcp.ts` speaks MCP 2026-07-28 to it over plain fetch;
// `inspector.ts` makes DevTools calls to its isolate (heap, forced GC). Private; TypeScript source, run by vitest or
// by Node's type stripping (hence the `.ts` import specifiers).
export * from "./inspector.ts";
export * from "./mcp.ts";
export * from "./processes.ts";
export * from "./wrangler.ts";
