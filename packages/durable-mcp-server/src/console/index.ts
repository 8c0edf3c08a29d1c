// durable-mcp-server/console: the operator console a Worker can mount beside the operator API (docs/operations.md,
// "The console"). Its own entry point, so that the page (about 300 KB) is in no Worker that does not import it.
export { serveConsole, type ConsoleOptions } from "./serve-console.js";
