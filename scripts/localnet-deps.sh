#!/usr/bin/env bash
# Installs a Node package's npm packages (npm ci) when node_modules is
# missing or package-lock.json / package.json changed since the last
# install: localnet/ by default, or the directory given (relative to the
# repository). A no-op when it has no package.json.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR="$ROOT/${1:-localnet}"
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
	echo "localnet-deps: npm ci in ${1:-localnet}/" >&2
	npm ci --no-audit --no-fund --loglevel=error >&2
else
	echo "localnet-deps: no package-lock.json; npm install in ${1:-localnet}/" >&2
	npm install --no-audit --no-fund --loglevel=error >&2
fi
mkdir -p node_modules
touch "$STAMP"
