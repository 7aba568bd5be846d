#!/usr/bin/env bash
# Deletes this checkout's development data (`make dev-reset`): its database
# (named in .dev/database), its wallet keys, its API keys and its localnet
# state, so the next `make dev` starts with an empty database sealed to new
# keys. Other checkouts' databases are left alone.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DEV="$ROOT/.dev"
say() { printf 'dev-reset: %s\n' "$*"; }
die() { printf 'dev-reset: error: %s\n' "$*" >&2; exit 1; }

name=agentwallet
[ -s "$DEV/database" ] && name=$(cat "$DEV/database")
case "$name" in
agentwallet | agentwallet_[0-9a-f]*) ;;
*) die ".dev/database names \"$name\", not a development database; not dropping it" ;;
esac
svc=$(scripts/services.sh) || die "could not reach PostgreSQL (see above)"
eval "$svc"
server=${TEST_DATABASE_URL:?}
command -v psql >/dev/null 2>&1 || die "psql is not installed"
say "dropping database $name"
psql -X -q -v ON_ERROR_STOP=1 "$server" -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)"
rm -f "$DEV/database" "$DEV/wallet-keys.env" "$DEV/credentials.env" "$DEV/localnet-state.json"
say "done: the next make dev makes a new database, wallet keys and API keys"
