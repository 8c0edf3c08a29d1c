// The page's agent route over the wire, from Node, as a hostile page or script would use it (no browser): the
// session cookie and the name derived from it, Origin checked on the WebSocket upgrade and on HTTP, the session
// secret required, malformed names refused with 400, the sessions per client limited, only WATCHER_SERVERS called
// (nothing sent to another URL), and no answer body of a server that is not MCP passed on.
import { randomBytes } from "node:crypto";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { SESSIONS_PER_CLIENT, type CallOutcome, type Connection, type SessionInfo } from "../shared/watcher-state.ts";

const { origin, listedPort } = inject("demo");
const FOREIGN = "http://evil.example";
/** Each test opens its sessions as its own client (CF-Connecting-IP, which wrangler dev keeps when a request has it). */
let nextClient = 1;
const newClient = () => `198.51.100.${nextClient++}`;

interface Opened {
  status: number;
  body: Partial<SessionInfo> & { error?: string; message?: string };
  setCookie: string | null;
  /** The `name=value` part of Set-Cookie, to send back. */
  cookie: string;
  headers: Headers;
}

async function openSession(client: string, headers: Record<string, string> = {}): Promise<Opened> {
  const res = await fetch(`${origin}/agents/session`, {
    method: "POST",
    headers: { origin, "cf-connecting-ip": client, ...headers },
  });
  const setCookie = res.headers.get("set-cookie");
  return {
    status: res.status,
    body: (await res.json()) as Opened["body"],
    setCookie,
    cookie: setCookie?.split(";")[0] ?? "",
    headers: res.headers,
  };
}

/** A WebSocket upgrade request to `path`: its status (101 when the agent took the socket). */
function upgradeStatus(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, {
      headers: {
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": randomBytes(16).toString("base64"),
        ...headers,
      },
    });
    req.on("upgrade", (res: IncomingMessage, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

/** An agent socket as a page would hold it, driven with the Agents SDK's RPC messages. */
class AgentSocket {
  private next = 1;
  private readonly pending = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data)) as {
        type?: string;
        id?: string;
        success?: boolean;
        result?: unknown;
        error?: string;
      };
      if (message.type !== "rpc" || !message.id) return;
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.success) waiting?.resolve(message.result);
      else waiting?.reject(new Error(message.error));
    });
  }

  static open(name: string, cookie: string): Promise<AgentSocket> {
    // Node's WebSocket (undici) takes headers: the Origin and the cookie a browser would send.
    const init = { headers: { origin, cookie } } as unknown as string[];
    const ws = new WebSocket(`${origin.replace("http", "ws")}/agents/task-watcher/${name}`, init);
    return new Promise((resolve, reject) => {
      ws.addEventListener("open", () => resolve(new AgentSocket(ws)));
      ws.addEventListener("error", () => reject(new Error(`the agent socket for ${name} did not open`)));
    });
  }

  call<T>(method: string, args: unknown[]): Promise<T> {
    const id = `t${this.next++}`;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.ws.send(JSON.stringify({ type: "rpc", id, method, args }));
    });
  }

  close() {
    this.ws.close();
  }
}

/**
 * A plain Node HTTP server that records what reaches it and answers with `answer`; while `hold` is set, every answer
 * waits for it (a slow server).
 */
async function recordingServer(
  port: number,
  answer: (path: string) => { status: number; type: string; body: string },
): Promise<{ server: Server; url: string; requests: string[]; hold?: Promise<void> }> {
  const requests: string[] = [];
  const recording: { server: Server; url: string; requests: string[]; hold?: Promise<void> } = {
    server: createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      req.resume();
      req.on("end", async () => {
        await recording.hold;
        const { status, type, body } = answer(req.url ?? "");
        res.writeHead(status, { "content-type": type });
        res.end(body);
      });
    }),
    url: "",
    requests,
  };
  await new Promise<void>((resolve) => recording.server.listen(port, "127.0.0.1", resolve));
  recording.url = `http://127.0.0.1:${(recording.server.address() as AddressInfo).port}`;
  return recording;
}

describe("the page's agent route", () => {
  const listedSecret = "INTERNAL-LISTING-3f9a";
  let listed: Awaited<ReturnType<typeof recordingServer>>;
  let unlisted: Awaited<ReturnType<typeof recordingServer>>;

  beforeAll(async () => {
    // On the port WATCHER_SERVERS lists (…/text/mcp, …/bare/mcp): not MCP, answers with something internal.
    listed = await recordingServer(listedPort, (path) =>
      path.startsWith("/text/")
        ? { status: 200, type: "text/html; charset=utf-8", body: `<html><pre>${listedSecret} /etc/ …</pre></html>` }
        : { status: 500, type: "application/json", body: JSON.stringify({ internal: listedSecret }) },
    );
    // On a port nothing lists.
    unlisted = await recordingServer(0, () => ({ status: 200, type: "application/json", body: "{}" }));
  });

  afterAll(async () => {
    await new Promise((resolve) => listed?.server.close(resolve));
    await new Promise((resolve) => unlisted?.server.close(resolve));
  });

  it("opens a session: a secret HttpOnly SameSite=Strict cookie, and the agent's name derived from it", async () => {
    const client = newClient();
    const first = await openSession(client);
    expect(first.status).toBe(200);
    expect(first.body.name).toMatch(/^[0-9a-f]{32}$/);
    expect(first.body.servers).toContain(`${origin}/mcp`);
    expect(first.body.servers).toContain(`${listed.url}/text/mcp`);
    const attributes = (first.setCookie ?? "").split(";").map((a) => a.trim().toLowerCase());
    expect(attributes).toEqual(expect.arrayContaining(["httponly", "samesite=strict", "path=/agents/"]));
    // Over http, not Secure (a browser would drop it); the name is not the secret.
    expect(attributes).not.toContain("secure");
    expect(first.cookie).not.toContain(first.body.name ?? "-");
    // The cookie brings back the same session (and opens no new one); another client gets another.
    const again = await openSession(client, { cookie: first.cookie });
    expect(again.body.name).toBe(first.body.name);
    expect(again.setCookie).toBeNull();
    expect((await openSession(newClient())).body.name).not.toBe(first.body.name);

    // With its cookie, from its origin, the agent answers: over a WebSocket and over HTTP.
    const socket = await AgentSocket.open(first.body.name ?? "", first.cookie);
    try {
      const connection = await socket.call<Connection>("connectTo", [`${origin}/mcp`]);
      expect(connection).toMatchObject({ state: "connected", server: "task-server 1.0.0" });
    } finally {
      socket.close();
    }
    const state = await fetch(`${origin}/agents/task-watcher/${first.body.name}`, {
      headers: { cookie: first.cookie },
    });
    expect(state.status).toBe(200);
    expect(((await state.json()) as { connection: Connection }).connection.state).toBe("connected");
  });

  it("refuses a foreign Origin with 403: the WebSocket upgrade, HTTP, and the session request", async () => {
    const { body, cookie } = await openSession(newClient());
    const path = `/agents/task-watcher/${body.name}`;
    expect(await upgradeStatus(path, { origin, cookie })).toBe(101);
    expect(await upgradeStatus(path, { origin: FOREIGN, cookie })).toBe(403);
    // A browser always sends Origin on an upgrade: a socket without one is not a page's.
    expect(await upgradeStatus(path, { cookie })).toBe(403);
    // A port of the same host is another origin (though the same site, so SameSite would send the cookie).
    expect(await upgradeStatus(path, { origin: origin.replace(/:\d+$/, ":1"), cookie })).toBe(403);

    const get = await fetch(`${origin}${path}`, { headers: { origin: FOREIGN, cookie } });
    expect(get.status).toBe(403);
    expect(await get.json()).toMatchObject({ error: "foreign_origin" });
    const crossSite = await fetch(`${origin}${path}`, { headers: { "sec-fetch-site": "cross-site", cookie } });
    expect(crossSite.status).toBe(403);
    const post = await fetch(`${origin}${path}`, { method: "POST", headers: { origin: FOREIGN, cookie } });
    expect(post.status).toBe(403);

    const foreignSession = await openSession(newClient(), { origin: FOREIGN });
    expect(foreignSession.status).toBe(403);
    expect(foreignSession.setCookie).toBeNull();
  });

  it("refuses a request without the session's secret with 403, even with the agent's name", async () => {
    const owner = await openSession(newClient());
    const stranger = await openSession(newClient());
    const path = `/agents/task-watcher/${owner.body.name}`;
    // No cookie; the stranger's own (valid) cookie; a cookie made up in the secret's shape.
    const madeUp = `watcher_session=${randomBytes(24).toString("base64url")}.${randomBytes(32).toString("base64url")}`;
    for (const cookie of [undefined, stranger.cookie, madeUp]) {
      const headers: Record<string, string> = cookie ? { origin, cookie } : { origin };
      expect(await upgradeStatus(path, headers)).toBe(403);
      const get = await fetch(`${origin}${path}`, { headers });
      expect(get.status).toBe(403);
      expect(await get.json()).toMatchObject({ error: "no_session" });
    }
    // A made-up cookie does not open a session either: it is replaced by a new one.
    const replaced = await openSession(newClient(), { cookie: madeUp });
    expect(replaced.status).toBe(200);
    expect(replaced.cookie).not.toBe(madeUp);
    // The owner's cookie still works.
    expect(await upgradeStatus(path, { origin, cookie: owner.cookie })).toBe(101);
  });

  it("treats a cookie whose signature is not base64url-decodable as no session, never 500", async () => {
    const { body } = await openSession(newClient());
    const path = `/agents/task-watcher/${body.name}`;
    const id = randomBytes(24).toString("base64url");
    // Characters of the alphabet, but a length no base64 has (4n + 1), or nothing at all after the dot.
    for (const tag of ["a", "abcde", "x".repeat(41), ""]) {
      const cookie = `watcher_session=${id}.${tag}`;
      const get = await fetch(`${origin}${path}`, { headers: { origin, cookie } });
      expect(get.status, tag).toBe(403);
      expect(await get.json()).toMatchObject({ error: "no_session" });
      const replaced = await openSession(newClient(), { cookie });
      expect(replaced.status, tag).toBe(200);
      expect(replaced.cookie).not.toBe(cookie);
    }
  });

  it("refuses a malformed agent name with 400, never 500", async () => {
    const { cookie } = await openSession(newClient());
    for (const name of ["a".repeat(10_000), "a".repeat(65), "a%20b", "a.b", "a/b"]) {
      const path = `/agents/task-watcher/${name}`;
      const get = await fetch(`${origin}${path}`, { headers: { origin, cookie } });
      expect(get.status, name.slice(0, 20)).toBe(400);
      expect(await get.json()).toMatchObject({ error: "bad_name" });
      expect(await upgradeStatus(path, { origin, cookie }), name.slice(0, 20)).toBe(400);
    }
    // 64 characters of the alphabet is a name (not this session's: 403).
    expect(
      (await fetch(`${origin}/agents/task-watcher/${"a".repeat(64)}`, { headers: { origin, cookie } })).status,
    ).toBe(403);
  });

  it(`lets one client open ${SESSIONS_PER_CLIENT} sessions a day, then answers 429; other clients are not affected`, async () => {
    const client = newClient();
    const names = new Set<string>();
    let first = "";
    for (let i = 0; i < SESSIONS_PER_CLIENT; i++) {
      const opened = await openSession(client);
      expect(opened.status).toBe(200);
      names.add(opened.body.name ?? "");
      if (i === 0) first = opened.cookie;
    }
    expect(names.size).toBe(SESSIONS_PER_CLIENT);
    const refused = await openSession(client);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe("too_many_sessions");
    expect(refused.setCookie).toBeNull();
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(23 * 3600);
    // A session the client already has goes on working; another client opens its own.
    expect((await openSession(client, { cookie: first })).status).toBe(200);
    expect((await openSession(newClient())).status).toBe(200);
  });

  it("is connected to the server of the latest connect: an earlier connect that ends later does not undo it", async () => {
    const { body, cookie } = await openSession(newClient());
    const socket = await AgentSocket.open(body.name ?? "", cookie);
    let release: (() => void) | undefined;
    listed.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    listed.requests.length = 0;
    try {
      // A connect to a slow server, still waiting for its answer when the next connect (to the page's own) ends.
      const slow = socket.call<Connection>("connectTo", [`${listed.url}/text/mcp`]);
      for (const deadline = Date.now() + 10_000; listed.requests.length === 0 && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(listed.requests).toEqual(["POST /text/mcp"]);
      const latest = await socket.call<Connection>("connectTo", [`${origin}/mcp`]);
      expect(latest).toMatchObject({ state: "connected", url: `${origin}/mcp` });
      release?.();
      // The slow one answers its own caller with its own outcome…
      expect(await slow).toMatchObject({ state: "failed", url: `${listed.url}/text/mcp` });
      // …and the agent stays connected to the latest.
      const state = (await (
        await fetch(`${origin}/agents/task-watcher/${body.name}`, { headers: { origin, cookie } })
      ).json()) as { connection: Connection; serverUrl: string };
      expect(state.connection).toMatchObject({ state: "connected", url: `${origin}/mcp` });
      expect(state.serverUrl).toBe(`${origin}/mcp`);
    } finally {
      release?.();
      listed.hold = undefined;
      listed.requests.length = 0;
      socket.close();
    }
  });

  it("calls only the listed servers: a URL WATCHER_SERVERS does not list is refused before any request", async () => {
    const { body, cookie } = await openSession(newClient());
    const socket = await AgentSocket.open(body.name ?? "", cookie);
    try {
      for (const url of [`${unlisted.url}/mcp`, `${listed.url}/text/mcp?x=1`, `${listed.url}/other/mcp`]) {
        const connection = await socket.call<Connection>("connectTo", [url]);
        expect(connection.state).toBe("failed");
        expect(connection.state === "failed" && connection.problem.message).toContain(
          "is not one of the servers this page's agent may call",
        );
        const outcome = await socket.call<CallOutcome>("fileUploadUrl", [
          url,
          { name: "a.csv", size: 1, sha256: "0".repeat(64), mimeType: "text/csv" },
        ]);
        expect(outcome.ok).toBe(false);
        expect(await socket.call<CallOutcome>("fileStatus", [url, "file_x"])).toMatchObject({ ok: false });
      }
    } finally {
      socket.close();
    }
    expect(unlisted.requests).toEqual([]);
    expect(listed.requests).toEqual([]);
  });

  it("names the status and content type of a listed server's non-MCP answer, never its body", async () => {
    const { body, cookie } = await openSession(newClient());
    const socket = await AgentSocket.open(body.name ?? "", cookie);
    listed.requests.length = 0;
    const answers: unknown[] = [];
    try {
      const html = await socket.call<Connection>("connectTo", [`${listed.url}/text/mcp`]);
      expect(html.state).toBe("failed");
      expect(html.state === "failed" && html.problem.message).toContain("not as an MCP server (HTTP 200)");
      answers.push(html);
      const json = await socket.call<Connection>("connectTo", [`${listed.url}/bare/mcp`]);
      expect(json.state).toBe("failed");
      answers.push(json);
      const outcome = await socket.call<CallOutcome>("fileStatus", [`${listed.url}/text/mcp`, "file_x"]);
      expect(outcome).toMatchObject({ ok: false, kind: "not-mcp", httpStatus: 200 });
      expect(!outcome.ok && outcome.message).toContain("HTTP 200 (text/html), and the body is not JSON");
      answers.push(outcome);
      const other = await socket.call<CallOutcome>("fileStatus", [`${listed.url}/bare/mcp`, "file_x"]);
      expect(!other.ok && other.message).toContain("HTTP 500 (application/json) without a JSON-RPC response");
      answers.push(other);
    } finally {
      socket.close();
    }
    // The listed server was asked (so the answers are its), and nothing of its bodies came back.
    expect(listed.requests).toEqual(["POST /text/mcp", "POST /bare/mcp", "POST /text/mcp", "POST /bare/mcp"]);
    const state = await fetch(`${origin}/agents/task-watcher/${body.name}`, { headers: { cookie } });
    answers.push(await state.json());
    for (const answer of answers) expect(JSON.stringify(answer)).not.toContain(listedSecret);
  });
});
