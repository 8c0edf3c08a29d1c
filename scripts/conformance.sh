#!/usr/bin/env bash
# Starts examples/conformance-server under `wrangler dev` and runs the official MCP conformance suite against it:
# every `tasks-*` scenario, `server-stateless` and `dns-rebinding-protection` (against the library's defaults).
# The expected scenarios are pinned: any missing from the suite's list, or any failed check, fails this script.
# Run through pnpm (`pnpm run conformance`) so that Node 22 from node_modules/.bin is first on PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
example="$root/examples/conformance-server"
port="${CONFORMANCE_PORT:-8787}"
url="http://127.0.0.1:$port/mcp"
out="$root/results/conformance"
state="$(mktemp -d)"
rm -rf "$out" && mkdir -p "$out"

# Probes use Node's fetch (no curl on a bare machine): exit 0 when $1 answers at all, or answers OK with a body.
probe() {
  node -e 'const [url, body] = process.argv.slice(1);
    const init = body ? { method: "POST", body, headers: { "content-type": "application/json",
      "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" } } : {};
    fetch(url, { ...init, signal: AbortSignal.timeout(2000) })
      .then((r) => process.exit(body && !r.ok ? 1 : 0), () => process.exit(1));' "$@"
}

if probe "http://127.0.0.1:$port/"; then
  echo "conformance: something already listens on 127.0.0.1:$port; set CONFORMANCE_PORT" >&2
  exit 1
fi

cd "$example"
# Its own process group, so that stopping it also stops the workerd processes wrangler spawns.
# Its own inspector port too: wrangler dev processes starting at once would all take the default 9229.
WRANGLER_BUILD_CONDITIONS=durable-mcp-source,workerd,worker,browser WRANGLER_SEND_METRICS=false setsid npx wrangler dev --ip 127.0.0.1 --port "$port" --inspector-port "$((port + 1000))" \
  --persist-to "$state" --log-level warn >"$out/wrangler.log" 2>&1 &
wrangler_pid=$!
stop() {
  kill -TERM -- "-$wrangler_pid" 2>/dev/null || true
  wait "$wrangler_pid" 2>/dev/null || true
  rm -rf "$state"
}
trap stop EXIT

discover='{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
for _ in $(seq 1 120); do
  if probe "$url" "$discover"; then
    ready=1
    break
  fi
  kill -0 "$wrangler_pid" 2>/dev/null || break
  sleep 0.5
done
if [ -z "${ready:-}" ]; then
  echo "conformance: wrangler dev did not come up on $url" >&2
  cat "$out/wrangler.log" >&2
  exit 1
fi

# The scenarios CI must run, pinned: a change in `conformance list`'s format must not quietly run fewer.
expected="tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal tasks-mrtr-input
tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications tasks-required-task-error
tasks-mrtr-composition server-stateless dns-rebinding-protection"
listed=$(npx conformance list | sed -n 's/^ *- \([a-z0-9-]*\) .*/\1/p')
missing=""
for scenario in $expected; do
  grep -qx -- "$scenario" <<<"$listed" || missing="$missing $scenario"
done
if [ -n "$missing" ]; then
  echo "conformance: expected scenarios missing from \`conformance list\`:$missing" >&2
  exit 1
fi
# Any tasks-* scenario the suite adds later runs too.
scenarios="$expected $(grep -x -- 'tasks-[a-z0-9-]*' <<<"$listed" | grep -vxF -f <(tr ' ' '\n' <<<"$expected") || true)"
passed=0
failed=0
for scenario in $scenarios; do
  if npx conformance server --url "$url" --scenario "$scenario" -o "$out" >"$out/$scenario.log" 2>&1; then
    passed=$((passed + 1))
    echo "conformance: $scenario ok ($(grep -E '^Passed:' "$out/$scenario.log" | tail -1))"
  else
    failed=$((failed + 1))
    echo "conformance: $scenario FAILED"
    cat "$out/$scenario.log"
  fi
done
echo "conformance scenarios: $passed passed, $failed failed"
mkdir -p "$root/results/tests"
echo "{\"passed\": $passed, \"failed\": $failed}" >"$root/results/tests/conformance-server.json"
[ "$failed" -eq 0 ] && [ "$passed" -ge "$(wc -w <<<"$expected")" ]
