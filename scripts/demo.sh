#!/usr/bin/env bash
# The demo command (README: `npm start`). Needs only Node >= 20 and npm: installs the workspace (with Node 22),
# then serves the demo Worker with `wrangler dev` on local embedded storage at http://127.0.0.1:8788/mcp.
set -euo pipefail
cd "$(dirname "$0")/.."
PNPM_VERSION=12.4.2
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  pnpm() { npx -y "pnpm@$PNPM_VERSION" "$@"; }
fi
pnpm install --frozen-lockfile
exec npx -y "pnpm@$PNPM_VERSION" exec wrangler dev "$@"
