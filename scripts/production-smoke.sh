#!/usr/bin/env bash
# A production install, as docs/operations.md describes it: the built dist/ beside
# package.json and the lock file, `npm install --omit=dev` (no compiler, no bundler),
# then `node dist/server.js` on its embedded defaults. It must become ready, serve the
# site and answer from the bundled geolocation data, and stop on SIGTERM with 0.
set -euo pipefail
cd "$(dirname "$0")/.."

[ -f dist/server.js ] && [ -f dist/web/index.html ] || { echo "production-smoke: build first (npm run build)"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r package.json package-lock.json dist "$dir/"
# The netdiag command: its bin and the build check it runs first (which, without the build tools, uses dist/).
mkdir -p "$dir/bin" "$dir/scripts"
cp bin/netdiag.mjs "$dir/bin/"
cp scripts/ensure-built.mjs "$dir/scripts/"
(cd "$dir" && npm install --omit=dev --no-audit --no-fund --loglevel=error)
for tool in tsx esbuild typescript vitest; do
  [ ! -e "$dir/node_modules/$tool" ] || { echo "production-smoke: $tool was installed by --omit=dev"; exit 1; }
done

port=18181
(cd "$dir" && PORT=$port HOST=127.0.0.1 LOG_LEVEL=warn LIST_CACHE_DIR="$dir/lists" \
  RELAY_RANGES_URL=https://127.0.0.1:9/egress.csv TOR_EXIT_LIST_URL=https://127.0.0.1:9/tor \
  MALLOC_MMAP_THRESHOLD_=131072 exec node --max-semi-space-size=8 dist/server.js) &
pid=$!
for _ in $(seq 1 100); do curl -fs "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.2; done
curl -fsS "http://127.0.0.1:$port/readyz"; echo
curl -fsS -o /dev/null "http://127.0.0.1:$port/"
curl -fsS "http://127.0.0.1:$port/api/ip-geo?ip=8.8.8.8" | grep -q '"country":{"code":"US"'
# The MCP endpoint (the SDK is a production dependency): one stateless tool call.
curl -fsS "http://127.0.0.1:$port/mcp" -H 'content-type: application/json' \
  -H 'accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ip_geo","arguments":{"ip":"8.8.8.8"}}}' |
  grep -q '"structuredContent":{"ip":"8.8.8.8","country":{"code":"US"'
kill -TERM "$pid"
wait "$pid"
# One in-process lookup through the command, on the bundled data only.
(cd "$dir" && LIST_CACHE_DIR="$dir/lists" node bin/netdiag.mjs ip-geo 8.8.8.8 --json) | grep -q '"country": {'
echo "production-smoke: ok (npm install --omit=dev + node dist/server.js)"
