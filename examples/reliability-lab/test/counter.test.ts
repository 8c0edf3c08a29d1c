// The counter service itself: a connection left idle between hits stays usable, so a hit the Worker sends on a
// connection it kept open is not lost to Node closing that connection under it (test/counter.ts, keepAliveTimeout).
import { connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "@durable-mcp/test-harness";
import { startCounter } from "./counter.ts";
import type { Server } from "node:http";

/** Node's default keepAliveTimeout: the idle time after which the counter used to close a connection. */
const NODE_DEFAULT_KEEP_ALIVE_MS = 5_000;

/** One HTTP/1.1 request on `socket` (kept alive); resolves with the status line of the answer. */
function request(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      socket.off("close", onClose);
      resolve(chunk.toString("latin1").split("\r\n")[0]!);
    };
    const onClose = () => {
      socket.off("data", onData);
      reject(new Error("the counter closed the connection"));
    };
    socket.once("data", onData);
    socket.once("close", onClose);
    socket.write(text);
  });
}

const hit = (step: string) => {
  const body = JSON.stringify({ key: "k", job: "counter-test", step, attempt: 1, instance: 1 });
  return (
    `POST /hit HTTP/1.1\r\nHost: counter\r\nConnection: keep-alive\r\nContent-Type: application/json\r\n` +
    `Idempotency-Key: k\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
};

describe("counter", () => {
  let server: Server;
  beforeAll(async () => {
    server = await startCounter();
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("keeps a connection idle for longer than Node's default keep-alive open and answers the next hit on it", async () => {
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    let closed = false;
    socket.once("close", () => (closed = true));
    try {
      expect(await request(socket, hit("first"))).toBe("HTTP/1.1 204 No Content");
      await sleep(NODE_DEFAULT_KEEP_ALIVE_MS + 1_000);
      expect(closed).toBe(false);
      expect(await request(socket, hit("second"))).toBe("HTTP/1.1 204 No Content");
    } finally {
      socket.destroy();
    }
  });
});
