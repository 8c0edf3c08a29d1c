// Where the agent's requests may go and how: only to the servers WATCHER_SERVERS lists (agent/servers.ts), checked
// before anything is sent; to the Worker's own origin in-process, through the handler the Worker registers with
// `serveOwnOriginWith` (a Worker may not fetch itself); with the bearer token the agent keeps for the URL.
import type { JsonObject, LogEntry } from "../shared/mcp.ts";
import { listedServer, listedServers, NotListedError } from "./servers.ts";
import type { WatcherStorage } from "./storage.ts";
import { rpc } from "./transport.ts";

type OwnHandler = (request: Request, env: unknown) => Response | Promise<Response>;
let ownHandler: OwnHandler | undefined;

/**
 * The Worker's own fetch handler: requests to a server URL on the origin the agent is served from go through it,
 * in-process, instead of an outbound fetch of the Worker to itself.
 */
export function serveOwnOriginWith(handler: OwnHandler): void {
  ownHandler = handler;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

export class Outbound {
  constructor(
    private readonly env: unknown,
    private readonly store: WatcherStorage,
  ) {}

  /** One JSON-RPC request: in-process for the Worker's own origin, fetch for any other; with the URL's token. */
  request(url: string, method: string, params: JsonObject, log: (entry: LogEntry) => void): Promise<JsonObject> {
    const own = this.store.getSecret("origin");
    if (this.listed(url) === undefined) return Promise.reject(new NotListedError(url));
    const handler = ownHandler;
    const inProcess = handler && own !== undefined && originOf(url) === own;
    return rpc(url, method, params, log, {
      token: this.token(url),
      ...(inProcess ? { fetch: async (request: Request) => handler(request, this.env) } : {}),
    });
  }

  /** `url` as WATCHER_SERVERS lists it, or undefined (also while the agent does not know its own origin yet). */
  listed(url: string): string | undefined {
    const own = this.store.getSecret("origin");
    return own === undefined ? undefined : listedServer(url, listedServers(this.env, own));
  }

  token(url: string): string | undefined {
    return this.store.getSecret(`token:${url}`);
  }

  /** Replaces the token kept for `url` (undefined removes it). */
  setToken(url: string, token: string | undefined): void {
    this.store.setSecret(`token:${url}`, token);
  }

  /** The origin the agent is served from, learnt from the requests that reach it (the page's, the Worker's). */
  rememberOrigin(url: string): void {
    const origin = originOf(url);
    if (origin && origin !== this.store.getSecret("origin")) this.store.setSecret("origin", origin);
  }
}
