// The raw MCP client of the over-the-wire suites is the library's own test client (`durable-mcp-server/testing`),
// re-exported here so that every suite keeps importing it from the harness. Its portable part alone: this package
// runs in Node, without the Workers types the rest of the testing kit needs.
export * from "durable-mcp-server/testing/mcp-client";
