// One constant per protocol value: where the runtime spells a protocol value itself (the 2025-11-25 wire, the portable
// raw client that imports nothing), it must equal the SDK's export of it, or the library's one constant.
import {
  JSONRPC_VERSION,
  RELATED_TASK_META_KEY,
  SUBSCRIPTION_ID_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { jsonRpcNotification, jsonRpcResultMessage } from "../../src/errors/jsonrpc.js";
import { LEGACY_TASKS_VERSION } from "../../src/routing/wire-2025/session.js";
import { RELATED_TASK_META } from "../../src/routing/wire-2025/shapes.js";
import { PROTOCOL_VERSION as CLIENT_PROTOCOL_VERSION, SUBSCRIPTION_ID, TASKS } from "../../src/testing/mcp-client.js";
import { PROTOCOL_VERSION, TASKS_EXTENSION } from "../../src/wire/protocol.js";

describe("protocol constants", () => {
  it("equal the SDK's exports where it has one", () => {
    expect(RELATED_TASK_META).toBe(RELATED_TASK_META_KEY);
    expect(SUBSCRIPTION_ID).toBe(SUBSCRIPTION_ID_META_KEY);
    expect(SUPPORTED_PROTOCOL_VERSIONS).toContain(LEGACY_TASKS_VERSION);
    expect(jsonRpcResultMessage(1, {}).jsonrpc).toBe(JSONRPC_VERSION);
    expect(jsonRpcNotification("notifications/tasks", {}).jsonrpc).toBe(JSONRPC_VERSION);
  });

  it("the raw client's copies equal the library's", () => {
    expect(CLIENT_PROTOCOL_VERSION).toBe(PROTOCOL_VERSION);
    expect(TASKS).toBe(TASKS_EXTENSION);
  });
});
