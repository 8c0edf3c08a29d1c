// The MCP servers the page's agent may call: exactly those listed in the Worker's WATCHER_SERVERS variable, so that
// the agent never becomes a way to make the Worker send requests to an address a page chose. A URL that is not
// listed is refused before any request is made.

/** What WATCHER_SERVERS lists when it is not set: this Worker's own MCP endpoint, called in-process. */
export const DEFAULT_SERVERS = "/mcp";

/** Thrown (before any request) for a server URL that WATCHER_SERVERS does not list. */
export class NotListedError extends Error {
  constructor(readonly url: string) {
    super(`${url} is not one of the servers this page's agent may call (WATCHER_SERVERS).`);
    this.name = "NotListedError";
  }
}

/**
 * The listed servers as absolute URLs. Entries are separated by commas or whitespace; an entry starting with "/" is
 * a path on the Worker's own origin (`ownOrigin`), e.g. "/mcp". A malformed entry is a configuration error and
 * throws: silently dropping it would hide the mistake.
 */
export function listedServers(env: unknown, ownOrigin: string): string[] {
  const raw = (env as { WATCHER_SERVERS?: unknown }).WATCHER_SERVERS;
  const value = typeof raw === "string" ? raw : DEFAULT_SERVERS;
  const servers: string[] = [];
  for (const entry of value.split(/[\s,]+/).filter(Boolean)) {
    let url: URL;
    try {
      url = entry.startsWith("/") ? new URL(entry, ownOrigin) : new URL(entry);
    } catch {
      throw new Error(`WATCHER_SERVERS: "${entry}" is neither a URL nor a path starting with "/".`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new Error(`WATCHER_SERVERS: "${entry}" is not an http(s) URL.`);
    }
    if (!servers.includes(url.href)) servers.push(url.href);
  }
  return servers;
}

/** The listed URL that `url` names (compared in URL-normalized form), or undefined. */
export function listedServer(url: string, servers: string[]): string | undefined {
  let href: string;
  try {
    href = new URL(url).href;
  } catch {
    return undefined;
  }
  return servers.find((server) => server === href);
}
