#!/bin/bash
# seed-npm-registry.sh LOCKDIR STORAGE: fills a Verdaccio storage directory
# with every package of LOCKDIR's package-lock.json, fetched once from
# registry.npmjs.org (Verdaccio's uplink) by an npm ci through it. The
# container backend's npm ci benchmark then serves STORAGE from 127.0.0.1
# with no uplink, so the benchmark itself reaches nothing but loopback.
# Needs the kit make deps installs (Verdaccio and npm in $VERDACCIO_DIR).
set -euo pipefail
lockdir=$(realpath "$1") storage=$2
kit=${VERDACCIO_DIR:?}/node_modules
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
cat >"$work/config.yaml" <<YAML
storage: $work/storage
uplinks:
  npmjs: { url: https://registry.npmjs.org/, timeout: 60s, max_fails: 5 }
packages:
  '**': { access: \$all, proxy: npmjs }
web: { enable: false }
log: { type: stdout, format: pretty, level: warn }
YAML
HOME=$work node "$kit/verdaccio/bin/verdaccio" --config "$work/config.yaml" --listen "127.0.0.1:$port" >"$work/verdaccio.log" 2>&1 &
pid=$!
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/-/ping" >/dev/null && break; sleep 0.2; done
mkdir "$work/app" && cp "$lockdir/package.json" "$lockdir/package-lock.json" "$work/app/"
(cd "$work/app" && HOME=$work node "$kit/npm/bin/npm-cli.js" ci --ignore-scripts --no-audit --no-fund \
	--no-update-notifier --loglevel=error --registry "http://127.0.0.1:$port/" --cache "$work/cache")
kill $pid; wait $pid 2>/dev/null || true
rm -rf "$storage.tmp" && mkdir -p "$(dirname "$storage")" && mv "$work/storage" "$storage.tmp"
rm -rf "$storage" && mv "$storage.tmp" "$storage"
echo "seeded $storage: $(find "$storage" -name '*.tgz' | wc -l) tarballs"
