// The "Server" panel's form: the servers the agent may call (WATCHER_SERVERS; no free URL), the bearer token field
// when one is needed or kept (focused when a server answered 401), and Connect.
import type { RefObject } from "react";

export interface ConnectFormProps {
  servers: string[];
  /** The page's own server, when listed. */
  own: string | undefined;
  url: string;
  choose: (url: string) => void;
  showToken: boolean;
  needsToken: boolean;
  /** The agent holds a token for the URL: an empty field keeps it. */
  hasToken: boolean;
  token: string;
  setToken: (token: string) => void;
  tokenInput: RefObject<HTMLInputElement | null>;
  connecting: boolean;
  connect: (url: string) => Promise<void>;
}

export function ConnectForm(props: ConnectFormProps) {
  const { servers, own, url, token, needsToken, connecting } = props;
  return (
    <form
      className="connect"
      onSubmit={(event) => {
        event.preventDefault();
        void props.connect(url.trim());
      }}
    >
      <div className="field">
        <label htmlFor="server-url">{servers.length > 1 ? "Server (or another allowed one)" : "Server"}</label>
        <select id="server-url" value={url} onChange={(e) => props.choose(e.target.value)}>
          {servers.map((server) => (
            <option key={server} value={server}>
              {server === own ? `${server} (this page's own)` : server}
            </option>
          ))}
        </select>
      </div>
      {props.showToken && (
        <div className="field">
          <label htmlFor="server-token">Bearer token{needsToken ? " (this server requires one)" : ""}</label>
          <input
            id="server-token"
            ref={props.tokenInput}
            type="password"
            autoComplete="off"
            value={token}
            onChange={(e) => props.setToken(e.target.value)}
            placeholder={props.hasToken ? "kept by the agent for this URL" : "the server's token (AUTH_TOKENS)"}
          />
        </div>
      )}
      <button type="submit" className="primary" disabled={connecting || !url}>
        {connecting ? "Connecting…" : "Connect"}
      </button>
    </form>
  );
}
