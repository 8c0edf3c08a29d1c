/** JSON-RPC error codes the Tasks runtime answers with. */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Mcp-Method / Mcp-Name header missing or not matching the body. */
  HeaderMismatch: -32020,
  /** The request needs a client capability it did not declare. */
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];
