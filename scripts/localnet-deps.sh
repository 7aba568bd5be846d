#!/usr/bin/env bash
# Installs localnet/'s npm packages (npm ci) when node_modules is missing or
# package-lock.json / package.json changed since the last install.
# A no-op when localnet/ has no package.json yet.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR="$ROOT/localnet"
STAMP="$DIR/node_modules/.install-stamp"

if [ ! -f "$DIR/package.json" ]; then
	echo "localnet-deps: $DIR/package.json not found; skipping npm ci" >&2
	exit 0
fi
command -v npm >/dev/null 2>&1 || { echo "localnet-deps: error: npm not found (install Node.js 20)" >&2; exit 1; }

fresh=1
for f in "$DIR/package-lock.json" "$DIR/package.json"; do
	if [ -f "$f" ] && { [ ! -f "$STAMP" ] || [ "$f" -nt "$STAMP" ]; }; then
		fresh=
	fi
done
[ -f "$STAMP" ] || fresh=
if [ -n "$fresh" ]; then
	exit 0
fi

cd "$DIR"
if [ -f package-lock.json ]; then
	echo "localnet-deps: npm ci in localnet/" >&2
	npm ci --no-audit --no-fund --loglevel=error >&2
else
	echo "localnet-deps: no package-lock.json; npm install in localnet/" >&2
	npm install --no-audit --no-fund --loglevel=error >&2
fi
mkdir -p node_modules
touch "$STAMP"
