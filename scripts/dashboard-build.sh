#!/usr/bin/env bash
# Builds the dashboard (web/dashboard → internal/dashboard/dist/app, which
# the api binary embeds): npm ci when its packages changed, then the build
# when a source is newer than the last one.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/localnet-deps.sh" web/dashboard
OUT="$ROOT/internal/dashboard/dist/app/index.html"
if [ -f "$OUT" ] && [ -z "$(find "$ROOT/web/dashboard/src" "$ROOT/web/dashboard/index.html" "$ROOT/web/dashboard/vite.config.ts" \
	"$ROOT/web/dashboard/package-lock.json" -newer "$OUT" -print -quit)" ]; then
	exit 0
fi
echo "dashboard: building web/dashboard" >&2
cd "$ROOT/web/dashboard"
npm run --silent build >&2
