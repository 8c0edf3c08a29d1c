// The key that signs 2025-11-25 session ids without a configured secret: generated once for the deployment and kept
// in its TaskRunner namespace, so a session opened on one instance is honoured on every other. Two durableMcp apps of
// the fixture Worker, each with a signer of its own as two isolates have, stand for two instances.
import { describe, expect, it, vi } from "vitest";
import { env, SELF } from "cloudflare:test";
import { readSessionKey } from "../../src/runner/session-key.js";
import { encodeJson, Signer } from "../../src/routing/wire-2025/signing.js";
import type { FixtureEnv } from "../fixtures/worker.js";

const fixture = env as unknown as FixtureEnv;
const VERSION = "2025-11-25";
let nextId = 1;

async function call(url: string, method: string, params: Record<string, unknown>, session?: string) {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: "Bearer keyholder",
  };
  if (session) headers["mcp-session-id"] = session;
  const response = await SELF.fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
  const text = await response.text();
  const data = text.split("\n").find((line) => line.startsWith("data: "));
  return {
    status: response.status,
    session: response.headers.get("mcp-session-id"),
    body: JSON.parse(data ? data.slice(6) : text),
  };
}

async function initialize(url: string): Promise<string> {
  const reply = await call(url, "initialize", {
    protocolVersion: VERSION,
    capabilities: { elicitation: {} },
    clientInfo: { name: "key-test", version: "1.0.0" },
  });
  return reply.session!;
}

/**
 * Whether `url` honours `session`: without the version header only a valid 2025-11-25 session makes a
 * `params.task` call a task (else the SDK answers it as an ordinary call).
 */
async function honoured(url: string, session: string): Promise<boolean> {
  const args = { name: "send_report", arguments: { to: "ada@example.com", pages: 1 }, task: {} };
  const reply = await call(url, "tools/call", args, session);
  return reply.body.result?.task !== undefined;
}

const FIRST = "http://fixture.test/generated-key-1/mcp";
const SECOND = "http://fixture.test/generated-key-2/mcp";
const CONFIGURED = "http://fixture.test/mcp";

describe("2025-11-25 session keys", () => {
  it("without a configured secret, a session opened on one instance is honoured on another", async () => {
    const session = await initialize(FIRST);
    expect(await honoured(FIRST, session)).toBe(true);
    expect(await honoured(SECOND, session)).toBe(true);
    const back = await initialize(SECOND);
    expect(await honoured(FIRST, back)).toBe(true);
  });

  it("a configured secret overrides the generated key, and a session that does not verify is logged", async () => {
    const warn = vi.spyOn(console, "warn");
    try {
      const generated = await initialize(FIRST);
      expect(await honoured(CONFIGURED, generated)).toBe(false);
      const configured = await initialize(CONFIGURED);
      expect(await honoured(FIRST, configured)).toBe(false);
      const logged = warn.mock.calls.filter(([message]) => String(message).includes("session id did not verify"));
      expect(logged.map(([, context]) => (context as { keySource: string }).keySource).toSorted()).toEqual([
        "configured",
        "generated",
      ]);
      // Context, never the id or its MAC.
      for (const args of logged) {
        const text = JSON.stringify(args);
        expect(text).not.toContain(generated.split(".")[2]);
        expect(text).not.toContain(configured.split(".")[2]);
      }
    } finally {
      warn.mockRestore();
    }
  });

  it("answers a forged session id whose payload is out of any range as any other forged one, not with a 500", async () => {
    const session = await initialize(FIRST);
    const forgedMac = `${session.slice(0, session.lastIndexOf(".") + 1)}${"A".repeat(43)}`;
    const payload = { v: VERSION, c: { elicitation: {} }, p: "x", e: 1e308, s: "x" };
    const outOfRange = `dmcp-s1.${encodeJson(payload)}.${"A".repeat(43)}`;
    const args = { name: "send_report", arguments: { to: "ada@example.com", pages: 1 }, task: {} };
    const [plain, odd] = [
      await call(FIRST, "tools/call", args, forgedMac),
      await call(FIRST, "tools/call", args, outOfRange),
    ];
    expect(odd.status).toBe(plain.status);
    expect(odd.body.result?.task).toBeUndefined();
    expect({ ...odd.body, id: 0 }).toEqual({ ...plain.body, id: 0 });
  });

  it("generates the key once and keeps it", async () => {
    const key = await readSessionKey(fixture.MCP_TASK_RUNNER);
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await readSessionKey(fixture.MCP_TASK_RUNNER)).toBe(key);
  });

  it("reads the generated key again after a failed read, and once it is read keeps it", async () => {
    let reads = 0;
    const signer = new Signer(undefined, async () => {
      reads++;
      if (reads === 1) throw new Error("transient");
      return "k".repeat(43);
    });
    await expect(signer.sign("x")).rejects.toThrow("transient");
    const mac = await signer.sign("x");
    expect(await signer.verify("x", mac)).toBe(true);
    expect(reads).toBe(2);
  });
});
