#!/usr/bin/env bash
# The one test command (README: `npm test`). Needs only Node >= 20 and npm on PATH: it installs pnpm and the
# workspace (which brings Node 22 as the `node` package), then runs typecheck, lint and every test suite,
# including the MCP conformance run against the example Worker under `wrangler dev`.
set -euo pipefail
cd "$(dirname "$0")/.."
export NX_DAEMON=false NX_NO_CLOUD=true
# wrangler bundles the workspace's library from its TypeScript source (the "durable-mcp-source" export condition).
export WRANGLER_BUILD_CONDITIONS=durable-mcp-source,workerd,worker,browser
PNPM_VERSION=12.4.2
if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  pnpm() { npx -y "pnpm@$PNPM_VERSION" "$@"; }
fi
pnpm install --frozen-lockfile
# pnpm puts node_modules/.bin (with Node 22) first on PATH for everything it runs.
pnpm exec node --version
# Every suite writes its counts into results/tests/ (the starter, which has no path into the repository, is told
# where by TEST_REPORT_DIR); the last line of the run is their total.
export TEST_REPORT_DIR="$PWD/results/tests"
rm -rf "$TEST_REPORT_DIR"
# The test command always runs every target: a cached result would not show that this machine can run it.
status=0
pnpm exec nx run-many -t build typecheck lint test --skip-nx-cache --outputStyle=stream || status=$?
summary_args=()
[ "$status" -eq 0 ] || summary_args+=(--targets-failed)
if ! pnpm exec node scripts/test-summary.mjs "${summary_args[@]}" && [ "$status" -eq 0 ]; then status=1; fi
exit "$status"
