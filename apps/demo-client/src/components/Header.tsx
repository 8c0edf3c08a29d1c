// The page's header: its title (a link home), what the page is, and the status line given as children.
import type { ReactNode } from "react";
import type { Go } from "../routes.ts";
import { Link } from "./Link.tsx";

export function Header({ go, children }: { go: Go; children: ReactNode }) {
  return (
    <header>
      <h1>
        <Link to="/" go={go}>
          durable-mcp-server · tasks
        </Link>
      </h1>
      <p className="muted">
        This page's MCP client is an agent (a Durable Object of this Worker): it starts tools as tasks (MCP Tasks
        extension, protocol 2026-07-28) and follows them with tasks/get, also while no page is open.
      </p>
      {children}
    </header>
  );
}
