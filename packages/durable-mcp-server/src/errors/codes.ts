/**
 * JSON-RPC error codes the SDK has no export for. Everything else (-32700 … -32603, -32021, -32022) is the SDK's
 * own `ProtocolErrorCode`: import that, never a copy, so the two cannot drift.
 */
export const OwnErrorCode = {
  /**
   * `Mcp-Method` / `Mcp-Name` / `MCP-Protocol-Version` header missing or disagreeing with the body (SEP-2243's
   * HEADER_MISMATCH). The SDK answers it itself but keeps the constant private, and the router's listen path
   * must answer it before the SDK sees the request.
   */
  HeaderMismatch: -32020,
} as const;
