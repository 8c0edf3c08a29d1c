// The one JSON-RPC error serialiser (src/errors/jsonrpc.ts) and the error classes that go through it: the public
// TaskProtocolError is the SDK's ProtocolError, and every error the runtime answers itself has one wire shape.
import { ProtocolError, ProtocolErrorCode, UnsupportedProtocolVersionError } from "@modelcontextprotocol/server";
import { describe, expect, it } from "vitest";
import { OwnErrorCode } from "../../src/errors/codes.js";
import { ReplayDivergenceError } from "../../src/errors/errors.js";
import {
  jsonRpcErrorMessage,
  jsonRpcErrorResponse,
  jsonRpcRequest,
  jsonRpcStoredErrorMessage,
  toJsonRpcError,
} from "../../src/errors/jsonrpc.js";
import { TaskProtocolError } from "../../src/index.js";

describe("TaskProtocolError", () => {
  it("is the SDK's ProtocolError, keeps its name, code, message and data.reason", () => {
    const error = new TaskProtocolError(-32603, "the backend refused the job", { reason: "backend", job: 7 });
    expect(error).toBeInstanceOf(ProtocolError);
    expect(ProtocolError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("TaskProtocolError");
    expect(error.code).toBe(-32603);
    expect(error.message).toBe("the backend refused the job");
    expect(error.data).toEqual({ reason: "backend", job: 7 });
    // An SDK ProtocolError is not a TaskProtocolError: only a handler's own throw fails a task on purpose.
    expect(new ProtocolError(-32603, "x")).not.toBeInstanceOf(TaskProtocolError);
  });

  it("ReplayDivergenceError is one, with the SDK's internal-error code", () => {
    const error = new ReplayDivergenceError("send", "the journal has a sleep here");
    expect(error).toBeInstanceOf(TaskProtocolError);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(toJsonRpcError(error)).toEqual({
      code: ProtocolErrorCode.InternalError,
      message: 'replay divergence at step "send": the journal has a sleep here',
      data: { reason: "replay_divergence", step: "send" },
    });
  });
});

describe("errors/jsonrpc", () => {
  it("toJsonRpcError: code and message, data only when there is some", () => {
    expect(toJsonRpcError(new ProtocolError(ProtocolErrorCode.InvalidParams, "Unknown task"))).toStrictEqual({
      code: -32602,
      message: "Unknown task",
    });
    expect(toJsonRpcError(new TaskProtocolError(-32000, "no", { reason: "quota" }))).toStrictEqual({
      code: -32000,
      message: "no",
      data: { reason: "quota" },
    });
    // Falsy data is still data.
    expect(toJsonRpcError(new ProtocolError(-32000, "zero", 0))).toStrictEqual({
      code: -32000,
      message: "zero",
      data: 0,
    });
    // The SDK's subclasses carry their data through as they built it.
    const unsupported = new UnsupportedProtocolVersionError({ supported: ["2026-07-28"], requested: "1999-01-01" });
    expect(toJsonRpcError(unsupported)).toStrictEqual({
      code: ProtocolErrorCode.UnsupportedProtocolVersion,
      message: unsupported.message,
      data: unsupported.data,
    });
  });

  it("jsonRpcErrorMessage: the full error response to a request id", () => {
    const message = jsonRpcErrorMessage(7, new ProtocolError(ProtocolErrorCode.InternalError, "stream interrupted"));
    expect(message).toStrictEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32603, message: "stream interrupted" },
    });
  });

  it("jsonRpcErrorResponse: the HTTP status given (200 by default), a JSON body, null for an unread id", async () => {
    const refused = jsonRpcErrorResponse(null, new ProtocolError(ProtocolErrorCode.InvalidRequest, "Forbidden"), 403);
    expect(refused.status).toBe(403);
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await refused.json()).toStrictEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Forbidden" },
    });

    const answered = jsonRpcErrorResponse(
      "a",
      new ProtocolError(OwnErrorCode.HeaderMismatch, "Missing header", { h: 1 }),
    );
    expect(answered.status).toBe(200);
    expect(await answered.json()).toStrictEqual({
      jsonrpc: "2.0",
      id: "a",
      error: { code: -32020, message: "Missing header", data: { h: 1 } },
    });
  });

  it("jsonRpcStoredErrorMessage: a stored error object sent as stored, members in their order", () => {
    const stored = { message: "boom", code: -32000, data: { reason: "backend" } };
    const message = jsonRpcStoredErrorMessage("r1", stored);
    expect(message.error).toBe(stored);
    expect(JSON.stringify(message)).toBe(
      '{"jsonrpc":"2.0","id":"r1","error":{"message":"boom","code":-32000,"data":{"reason":"backend"}}}',
    );
  });

  it("jsonRpcRequest: jsonrpc, id, method, params in that order", () => {
    expect(JSON.stringify(jsonRpcRequest("q1", "elicitation/create", { message: "Proceed?" }))).toBe(
      '{"jsonrpc":"2.0","id":"q1","method":"elicitation/create","params":{"message":"Proceed?"}}',
    );
  });

  it("our own codes are only those the SDK lacks", () => {
    const sdkCodes = new Set<number>(Object.values(ProtocolErrorCode).filter((value) => typeof value === "number"));
    for (const code of Object.values(OwnErrorCode)) expect(sdkCodes.has(code)).toBe(false);
  });
});
