#!/usr/bin/env bash
# Installs the npm workspaces of the repository root (the TypeScript SDK,
# the LangChain tools, the examples) when their packages changed, and builds
# the two packages (tsc) when a source is newer than their build.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$ROOT/scripts/localnet-deps.sh" .
stale=
for pkg in typescript langchain; do
	out="$ROOT/sdk/$pkg/dist/index.js"
	if [ ! -f "$out" ] || [ -n "$(find "$ROOT/sdk/$pkg/src" "$ROOT/sdk/$pkg/package.json" -newer "$out" -print -quit)" ]; then
		stale=1
	fi
done
[ -n "$stale" ] || exit 0
echo "sdk: building sdk/typescript and sdk/langchain" >&2
cd "$ROOT"
npm run --silent build >&2
