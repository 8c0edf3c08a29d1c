#!/usr/bin/env bash
# The demo command (README: `npm start`). Needs only Node >= 20 and npm: installs the workspace (with Node 22), builds
# the task page, then serves the demo Worker with `wrangler dev` on local embedded storage: the page at
# http://127.0.0.1:8788/, MCP at http://127.0.0.1:8788/mcp.
set -euo pipefail
cd "$(dirname "$0")/.."
PNPM_VERSION=12.4.2
# wrangler bundles the workspace's library from its TypeScript source (the "durable-mcp-source" export condition).
export WRANGLER_BUILD_CONDITIONS=durable-mcp-source,workerd,worker,browser
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  pnpm() { npx -y "pnpm@$PNPM_VERSION" "$@"; }
fi
pnpm install --frozen-lockfile
# Local secrets for wrangler dev (never deployed), made once per clone: the key that signs file URLs, and the one
# that signs the task page's session cookies, and the one that signs 2025-11-25 MCP session ids (each added to a
# .dev.vars from before it existed).
for secret in FILE_URL_SECRET WATCHER_SESSION_SECRET MCP_SESSION_SECRET; do
  if ! grep -qs "^$secret=" .dev.vars; then
    # A file whose last line has no newline would run into the appended one.
    if [ -s .dev.vars ] && [ -n "$(tail -c 1 .dev.vars)" ]; then echo >> .dev.vars; fi
    echo "$secret=$(node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')" >> .dev.vars
    echo "wrote a fresh $secret to .dev.vars"
  fi
done
# The task page (apps/demo-client) into the folder wrangler.jsonc serves as static assets: http://127.0.0.1:8788/
# (its agent, TaskWatcher, is part of the Worker that wrangler dev bundles).
npx -y "pnpm@$PNPM_VERSION" --filter demo-client exec vite build --outDir www --emptyOutDir
exec npx -y "pnpm@$PNPM_VERSION" exec wrangler dev "$@"
