#!/usr/bin/env bash
# Runs the whole stack locally in one foreground process (`make dev`):
# PostgreSQL and a Redis of its own that asks a password, as deployed ones do
# (scripts/services.sh, scripts/services.sh dev-redis), the localnet Solana chain, and
# the api, worker and scheduler binaries. Ctrl-C (or SIGTERM) stops it all.
#
# Environment (all optional):
#   HTTP_ADDR      api listen address            (127.0.0.1:8080)
#   LOCALNET_PORT  localnet JSON-RPC port        (8899)
#   DATABASE_URL, REDIS_URL   use these servers instead of scripts/services.sh
#   DEV_REDIS_PORT  port of this checkout's own Redis  (63798)
#   LOG_LEVEL      debug, info, warn, error      (info)
#   DEV_LOG        "quiet" to not echo the logs to the terminal
#   SELLER_PORT    the demo x402 seller's port   (4021; examples/x402-seller)
#   X402_SELLER    "off" to not start the demo seller
#   MPP_SELLER_PORT  the demo MPP seller's port (4022; examples/mpp-seller)
#   MPP_SELLER     "off" to not start the demo MPP seller
#
# State kept between runs, all under .dev/:
#   database          this checkout's database name (made once, random), so its
#                     data stays with its own wallet keys (`make dev-reset` drops it)
#   wallet-keys.env   WALLET_MASTER_KEY / WALLET_PUBLIC_KEY (made once; chmod 600)
#   credentials.env   API_URL, API_KEY, APPROVER_KEY, ACCOUNT_ID, SOLANA_RPC_URL, SELLER_URL, MPP_SELLER_URL,
#                     DATABASE_URL, REDIS_URL (for bin/api and bin/worker commands)
#                     (keys reused while valid)
#   ops.env           OPS_USERNAME / OPS_PASSWORD for the queue UI at /ops/queues
#   redis-dev/        this checkout's Redis: its password (chmod 600), configuration
#   localnet-state.json, logs/*.log (previous run in *.log.1)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DEV="$ROOT/.dev"
LOGS="$DEV/logs"

HTTP_ADDR=${HTTP_ADDR:-127.0.0.1:8080}
LOCALNET_HOST=127.0.0.1
LOCALNET_PORT=${LOCALNET_PORT:-8899}
LOG_LEVEL=${LOG_LEVEL:-info}
SELLER_PORT=${SELLER_PORT:-4021}
MPP_SELLER_PORT=${MPP_SELLER_PORT:-4022}

say() { printf '\033[1mdev:\033[0m %s\n' "$*"; }
[ -t 1 ] || say() { printf 'dev: %s\n' "$*"; }
die() { printf 'dev: error: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

tcp_open() { (exec 3<>"/dev/tcp/$1/$2") >/dev/null 2>&1; }

# who_listens PORT: a hint about the process on a port, when ss can tell.
who_listens() {
	have ss || return 0
	ss -Hltnp "sport = :$1" 2>/dev/null | sed -n 's/.*users:((\("[^"]*"\),pid=\([0-9]*\).*/ (\1, pid \2)/p' | head -n 1
}

require_free_port() { # PORT WHAT VARIABLE EXAMPLE
	local host=127.0.0.1
	if tcp_open "$host" "$1"; then
		die "port $1 ($2) is already in use$(who_listens "$1"). Stop that process (another \`make dev\`?) or pick another port: $3=$4 make dev"
	fi
}

# ---------------------------------------------------------------- checks
for tool in go node npm curl; do
	have "$tool" || die "$tool is not installed"
done
[ -f localnet/server.js ] || die "localnet/server.js not found"

case "$HTTP_ADDR" in
*:*) ;;
*) die "HTTP_ADDR=$HTTP_ADDR: want host:port, e.g. 127.0.0.1:8080" ;;
esac
API_PORT=${HTTP_ADDR##*:}
API_HOST=${HTTP_ADDR%:*}
case "$API_HOST" in
"" | 0.0.0.0 | "[::]" | "::") API_HOST=127.0.0.1 ;;
esac
API_BASE="http://$API_HOST:$API_PORT"
API_URL="$API_BASE/api/public/v1"
SOLANA_RPC_URL="http://$LOCALNET_HOST:$LOCALNET_PORT"

require_free_port "$API_PORT" "api" HTTP_ADDR "127.0.0.1:$((API_PORT + 1))"
require_free_port "$LOCALNET_PORT" "localnet" LOCALNET_PORT "$((LOCALNET_PORT + 1))"

mkdir -p "$DEV" "$LOGS"

# ---------------------------------------------------------------- processes
PIDS=()
declare -A NAME_OF=()
LOGS_PID=
STOPPING=
FORCE=

stop_all() {
	local pid i alive
	# The api, worker and scheduler first (they drain in-flight work), then
	# the localnet, then the log printer.
	for group in app localnet; do
		alive=()
		for pid in "${PIDS[@]}"; do
			if [ "$group" = localnet ] && [ "${NAME_OF[$pid]}" != localnet ]; then continue; fi
			if [ "$group" = app ] && [ "${NAME_OF[$pid]}" = localnet ]; then continue; fi
			if kill -0 "$pid" 2>/dev/null; then
				kill -TERM "$pid" 2>/dev/null || true
				alive+=("$pid")
			fi
		done
		for i in $(seq 1 100); do # up to 25 s
			local any=
			for pid in "${alive[@]}"; do
				kill -0 "$pid" 2>/dev/null && any=1
			done
			[ -n "$any" ] && [ -z "$FORCE" ] || break
			sleep 0.25
		done
		for pid in "${alive[@]}"; do
			if kill -0 "$pid" 2>/dev/null; then
				say "${NAME_OF[$pid]} did not stop in time; killing it"
				kill -KILL "$pid" 2>/dev/null || true
			fi
			wait "$pid" 2>/dev/null || true
		done
	done
	if [ -n "$LOGS_PID" ]; then
		sleep 0.3 # let it print the last lines
		kill -TERM "$LOGS_PID" 2>/dev/null || true
		wait "$LOGS_PID" 2>/dev/null || true
	fi
}

on_exit() {
	local status=$?
	trap - EXIT
	trap 'FORCE=1' INT TERM
	if [ ${#PIDS[@]} -gt 0 ] || [ -n "$LOGS_PID" ]; then
		[ -n "$STOPPING" ] || say "stopping"
		stop_all
		say "stopped"
	fi
	exit "$status"
}
on_signal() {
	# A second Ctrl-C skips the graceful wait.
	trap 'FORCE=1' INT TERM
	STOPPING=1
	say "$1: stopping"
	exit 0
}
trap on_exit EXIT
trap 'on_signal interrupted' INT
trap 'on_signal terminated' TERM

# start NAME CMD...: runs CMD in the background, logging to .dev/logs/NAME.log
# (the previous run's log is kept as NAME.log.1).
start() {
	local name=$1 log="$LOGS/$1.log"
	shift
	[ -f "$log" ] && mv -f "$log" "$log.1"
	: >"$log"
	"$@" >>"$log" 2>&1 </dev/null &
	PIDS+=("$!")
	NAME_OF[$!]=$name
}

# check_alive: fail, with the end of its log, if a process has exited.
check_alive() {
	local pid
	for pid in "${PIDS[@]}"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			local name=${NAME_OF[$pid]} st=0
			wait "$pid" || st=$?
			echo "---- last lines of .dev/logs/$name.log ----" >&2
			tail -n 25 "$LOGS/$name.log" >&2 || true
			if grep -q "that WALLET_MASTER_KEY does not hold" "$LOGS/$name.log"; then
				die "$name exited: this checkout's database holds wallets sealed to other wallet keys than .dev/wallet-keys.env. To start again with empty local data (this checkout's database, keys and API keys), run: make dev-reset"
			fi
			die "$name exited (status $st) during startup"
		fi
	done
}

# ---------------------------------------------------------------- services
if [ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ]; then
	say "using DATABASE_URL and REDIS_URL from the environment"
else
	user_db=${DATABASE_URL:-} user_redis=${REDIS_URL:-}
	svc=$(scripts/services.sh) || die "could not get PostgreSQL and Redis (see above)"
	eval "$svc"
	if [ -z "$user_db" ]; then
		# This checkout's own database, kept with its own wallet keys: a
		# second checkout (or a fresh .dev/) must not find wallets sealed
		# to keys it does not hold. A checkout whose keys predate this
		# keeps the shared "agentwallet" database its wallets are in.
		DBNAME_FILE="$DEV/database"
		if [ ! -s "$DBNAME_FILE" ]; then
			if [ -s "$DEV/wallet-keys.env" ]; then
				db_name=agentwallet
			else
				db_name="agentwallet_$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"
			fi
			printf '%s\n' "$db_name" >"$DBNAME_FILE"
		fi
		DATABASE_URL="${DATABASE_URL%/*}/$(cat "$DBNAME_FILE")?sslmode=disable"
	fi
	DATABASE_URL=${user_db:-$DATABASE_URL}
	if [ -n "$user_redis" ]; then
		REDIS_URL=$user_redis
	else
		# Not the tests' Redis (no password; they flush its databases): one
		# of this checkout's own, with a password.
		svc=$(scripts/services.sh dev-redis) || die "could not start this checkout's Redis (see above)"
		eval "$svc"
	fi
fi
say "database: ${DATABASE_URL%%\?*}"
say "redis: $(printf '%s' "$REDIS_URL" | sed 's#//[^@/]*@#//…@#')"
export LOG_LEVEL

# ---------------------------------------------------------------- build
scripts/localnet-deps.sh
scripts/dashboard-build.sh
say "building bin/api bin/worker bin/scheduler"
go build -o bin/ ./cmd/api ./cmd/worker ./cmd/scheduler

# ---------------------------------------------------------------- secrets
KEYS="$DEV/wallet-keys.env"
if [ ! -s "$KEYS" ]; then
	say "generating wallet master keys into .dev/wallet-keys.env"
	(umask 077 && bin/worker keygen >"$KEYS.tmp") && mv -f "$KEYS.tmp" "$KEYS"
fi
chmod 600 "$KEYS"
WALLET_MASTER_KEY=$(sed -n 's/^WALLET_MASTER_KEY=//p' "$KEYS")
WALLET_PUBLIC_KEY=$(sed -n 's/^WALLET_PUBLIC_KEY=//p' "$KEYS")
[ -n "$WALLET_MASTER_KEY" ] && [ -n "$WALLET_PUBLIC_KEY" ] ||
	die ".dev/wallet-keys.env lacks WALLET_MASTER_KEY or WALLET_PUBLIC_KEY (delete it to make new keys; wallets sealed with the old ones become unusable)"

OPS="$DEV/ops.env"
if [ -n "${OPS_USERNAME:-}" ] && [ -n "${OPS_PASSWORD:-}" ]; then
	:
else
	if [ ! -s "$OPS" ]; then
		(umask 077 && printf 'OPS_USERNAME=ops\nOPS_PASSWORD=%s\n' "$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')" >"$OPS")
	fi
	OPS_USERNAME=$(sed -n 's/^OPS_USERNAME=//p' "$OPS")
	OPS_PASSWORD=$(sed -n 's/^OPS_PASSWORD=//p' "$OPS")
fi

# ---------------------------------------------------------------- migrate
say "migrating the database"
if ! bin/api migrate up 2>&1 | sed 's/^/  migrate: /'; then
	die "bin/api migrate up failed (a stale lock? then run: DATABASE_URL='$DATABASE_URL' bin/api migrate unlock)"
fi

# ---------------------------------------------------------------- start
# The sellers may not start this time: keep their last logs out of the echo.
for log in seller mpp-seller; do
	[ -f "$LOGS/$log.log" ] && mv -f "$LOGS/$log.log" "$LOGS/$log.log.1"
done
if [ "${DEV_LOG:-}" != quiet ]; then
	node scripts/devlogs.js localnet="$LOGS/localnet.log" api="$LOGS/api.log" \
		worker="$LOGS/worker.log" scheduler="$LOGS/scheduler.log" seller="$LOGS/seller.log" \
		mpp-seller="$LOGS/mpp-seller.log" </dev/null &
	LOGS_PID=$!
fi

say "starting localnet on $SOLANA_RPC_URL"
start localnet bash -c 'cd localnet && exec node server.js "$@"' localnet \
	--host "$LOCALNET_HOST" --port "$LOCALNET_PORT" --state "$DEV/localnet-state.json"
for i in $(seq 1 240); do
	grep -q '^localnet ready ' "$LOGS/localnet.log" && break
	check_alive
	[ "$i" -lt 240 ] || die "localnet printed no ready line in 60 s: see .dev/logs/localnet.log"
	sleep 0.25
done

# The demo x402 seller (examples/x402-seller: the official x402 packages,
# settling on the localnet), optional: skipped with a note when its
# packages are missing or its port is taken.
SELLER_URL=
if [ "${X402_SELLER:-}" = off ]; then
	:
elif [ ! -d examples/x402-seller/node_modules/@x402/express ]; then
	say "not starting the demo x402 seller: its packages are missing (make deps)"
elif tcp_open 127.0.0.1 "$SELLER_PORT"; then
	say "not starting the demo x402 seller: port $SELLER_PORT is in use$(who_listens "$SELLER_PORT") (SELLER_PORT=<port> make dev)"
else
	say "starting the demo x402 seller on http://127.0.0.1:$SELLER_PORT"
	start seller env -u SELLER_PAY_TO -u SELLER_NETWORK -u SELLER_ASSET bash -c 'cd examples/x402-seller && exec node server.js "$@"' seller \
		--rpc "$SOLANA_RPC_URL" --host 127.0.0.1 --port "$SELLER_PORT"
	for i in $(seq 1 240); do
		grep -q '"ready":true' "$LOGS/seller.log" && break
		check_alive
		[ "$i" -lt 240 ] || die "the x402 seller printed no ready line in 60 s: see .dev/logs/seller.log"
		sleep 0.25
	done
	SELLER_URL="http://127.0.0.1:$SELLER_PORT"
fi

# The demo MPP seller (examples/mpp-seller: the official mppx and
# @solana/mpp packages, settling on the localnet, its fee payer paying the
# fee), optional like the x402 seller.
MPP_SELLER_URL=
if [ "${MPP_SELLER:-}" = off ]; then
	:
elif [ ! -d examples/mpp-seller/node_modules/mppx ]; then
	say "not starting the demo MPP seller: its packages are missing (make deps)"
elif tcp_open 127.0.0.1 "$MPP_SELLER_PORT"; then
	say "not starting the demo MPP seller: port $MPP_SELLER_PORT is in use$(who_listens "$MPP_SELLER_PORT") (MPP_SELLER_PORT=<port> make dev)"
else
	say "starting the demo MPP seller on http://127.0.0.1:$MPP_SELLER_PORT"
	start mpp-seller env -u MPP_SELLER_RECIPIENT -u MPP_SELLER_NETWORK -u MPP_SELLER_CURRENCY -u MPP_SELLER_TOKEN_PROGRAM -u MPP_SELLER_SPLITS \
		bash -c 'cd examples/mpp-seller && exec node server.mjs "$@"' mpp-seller \
		--rpc "$SOLANA_RPC_URL" --host 127.0.0.1 --port "$MPP_SELLER_PORT" --fee-payer new
	for i in $(seq 1 240); do
		grep -q '"ready":true' "$LOGS/mpp-seller.log" && break
		check_alive
		[ "$i" -lt 240 ] || die "the MPP seller printed no ready line in 60 s: see .dev/logs/mpp-seller.log"
		sleep 0.25
	done
	MPP_SELLER_URL="http://127.0.0.1:$MPP_SELLER_PORT"
fi

common_env=(
	DATABASE_URL="$DATABASE_URL" REDIS_URL="$REDIS_URL" LOG_LEVEL="$LOG_LEVEL"
	SOLANA_RPC_URL_DEVNET="${SOLANA_RPC_URL_DEVNET:-$SOLANA_RPC_URL}"
	SOLANA_RPC_URL_MAINNET="${SOLANA_RPC_URL_MAINNET:-$SOLANA_RPC_URL}"
	# both networks on the localnet: accept its genesis hash (a real
	# cluster's node is accepted for its own network either way)
	SOLANA_LOCAL_CHAIN="${SOLANA_LOCAL_CHAIN:-true}"
	# the dashboard at /dashboard/ of the api: its sign-in domain and the
	# origin of its writes
	DASHBOARD_ORIGIN="${DASHBOARD_ORIGIN:-$API_BASE}"
	# test accounts' webhooks may reach receivers on this machine
	WEBHOOK_ALLOW_PRIVATE="${WEBHOOK_ALLOW_PRIVATE:-true}"
)
say "starting api on $API_BASE, worker, scheduler"
start api env -u WALLET_MASTER_KEY "${common_env[@]}" HTTP_ADDR="$HTTP_ADDR" \
	WALLET_PUBLIC_KEY="$WALLET_PUBLIC_KEY" OPS_USERNAME="$OPS_USERNAME" OPS_PASSWORD="$OPS_PASSWORD" \
	bin/api serve
start worker env -u WALLET_PUBLIC_KEY -u OPS_PASSWORD "${common_env[@]}" WALLET_MASTER_KEY="$WALLET_MASTER_KEY" \
	bin/worker serve
start scheduler env -u WALLET_MASTER_KEY -u OPS_PASSWORD "${common_env[@]}" bin/scheduler

for i in $(seq 1 240); do
	curl -fsS -m 2 -o /dev/null "$API_BASE/readyz" 2>/dev/null && break
	check_alive
	[ "$i" -lt 240 ] || die "$API_BASE/readyz did not answer 200 in 60 s: see .dev/logs/api.log"
	sleep 0.25
done

# ---------------------------------------------------------------- API keys
# API_KEY sends; APPROVER_KEY, a second admin key of the same account,
# approves what API_KEY's sends park (a key never approves its own).
CREDS="$DEV/credentials.env"
API_KEY=
APPROVER_KEY=
ACCOUNT_ID=
if [ -s "$CREDS" ]; then
	old=$(sed -n 's/^API_KEY=//p' "$CREDS")
	old_approver=$(sed -n 's/^APPROVER_KEY=//p' "$CREDS")
	old_account=$(sed -n 's/^ACCOUNT_ID=//p' "$CREDS")
	if [ -n "$old" ] && [ -n "$old_approver" ] && [ -n "$old_account" ]; then
		code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $old" "$API_URL/agents" || true)
		if [ "$code" = 200 ]; then
			API_KEY=$old
			APPROVER_KEY=$old_approver
			ACCOUNT_ID=$old_account
		else
			say "the saved API key is not accepted (HTTP $code); making a new one"
		fi
	fi
fi
if [ -z "$API_KEY" ]; then
	boot=$(bin/api bootstrap --network devnet) || die "bin/api bootstrap failed"
	API_KEY=$(printf '%s\n' "$boot" | sed -n 's/^api key *//p' | tr -d '[:space:]')
	account=$(printf '%s\n' "$boot" | sed -n 's/^account *\([0-9a-f-]*\).*/\1/p')
	[ -n "$API_KEY" ] && [ -n "$account" ] || die "bin/api bootstrap printed no key"
	APPROVER_KEY=$(bin/api keys create --account "$account" --quiet | tr -d '[:space:]') || die "bin/api keys create failed"
	ACCOUNT_ID=$account
fi
(umask 077 && printf 'API_URL=%s\nAPI_KEY=%s\nAPPROVER_KEY=%s\nACCOUNT_ID=%s\nSOLANA_RPC_URL=%s\nSELLER_URL=%s\nMPP_SELLER_URL=%s\nDATABASE_URL=%s\nREDIS_URL=%s\n' "$API_URL" "$API_KEY" "$APPROVER_KEY" "$ACCOUNT_ID" "$SOLANA_RPC_URL" "$SELLER_URL" "$MPP_SELLER_URL" "$DATABASE_URL" "$REDIS_URL" >"$CREDS.tmp") &&
	mv -f "$CREDS.tmp" "$CREDS"

DEVNET_USDC_MINT=4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU
cat <<EOF

  agentwallet is up
    API        $API_URL    (docs: $API_URL/docs)
    API key    $API_KEY
    approver   $APPROVER_KEY    (a second admin key: approves what API_KEY's sends park)
    dashboard  $API_BASE/dashboard/    (sign in with a Solana wallet registered as a user:)
               DATABASE_URL='$DATABASE_URL' bin/api users add --account $ACCOUNT_ID --role owner --address <your wallet's address>
    localnet   $SOLANA_RPC_URL
    redis      $(printf '%s' "$REDIS_URL" | sed 's#//[^@/]*@#//…@#')    (REDIS_URL with its password in .dev/credentials.env)
    queues UI  $API_BASE/ops/queues    (user $OPS_USERNAME, password in .dev/ops.env)
    x402 demo  ${SELLER_URL:-not started}    (a paid API: GET /weather 0.01 USDC; README "Buying from an x402 seller")
    MPP demo   ${MPP_SELLER_URL:-not started}    (a paid API: GET /weather 0.01 USDC, MPP's Payment scheme; the seller pays the fee)
    logs       .dev/logs/{api,worker,scheduler,localnet,seller,mpp-seller}.log
    saved in   .dev/credentials.env

  Try it:
    source .dev/credentials.env
    curl -s -H "Authorization: Bearer \$API_KEY" \$API_URL/agents
    curl -s -H "Authorization: Bearer \$API_KEY" -H 'Content-Type: application/json' \\
         -d '{"label":"my-agent"}' \$API_URL/agents
    # fund the new agent's "pubkey" on the localnet with 25 USDC and 1 SOL:
    PUBKEY=<pubkey from the answer above>
    curl -s \$SOLANA_RPC_URL -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,
         "method":"surfnet_setTokenAccount","params":["'\$PUBKEY'","$DEVNET_USDC_MINT",{"amount":25000000}]}'
    curl -s \$SOLANA_RPC_URL -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,
         "method":"surfnet_setAccount","params":["'\$PUBKEY'",{"lamports":1000000000}]}'
    # or fund it through the API, any asset of GET /assets by symbol (PYUSD is Token-2022):
    curl -s -H "Authorization: Bearer \$API_KEY" -H 'Content-Type: application/json' \\
         -d '{"usdc":25,"sol":1,"assets":{"PYUSD":10,"EURC":10}}' \$API_URL/wallets/<id>/fund
    # or let the account's fee payer pay fees and rent (agent wallets then need no SOL), funded here:
    curl -s -X PUT -H "Authorization: Bearer \$API_KEY" -H 'Content-Type: application/json' -d '{"enabled":true}' \$API_URL/fee-payer
    curl -s -H "Authorization: Bearer \$API_KEY" -H 'Content-Type: application/json' -d '{"sol":1}' \$API_URL/fee-payer/fund
    curl -s -H "Authorization: Bearer \$API_KEY" \$API_URL/agents/<id>
    # send 1.5 USDC (200 sent; 10 or more waits for approval: 202):
    curl -s -H "Authorization: Bearer \$API_KEY" -H 'Content-Type: application/json' \\
         -d '{"to":"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM","amount":1.5,"memo":"hello"}' \$API_URL/agents/<id>/send
    # another asset: its policy must list it first (PATCH /agents/<id>/policy {"assets":["USDC","PYUSD"]}):
    curl -s -H "Authorization: Bearer \$API_KEY" -H 'Content-Type: application/json' \\
         -d '{"to":"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM","amount":1.5,"asset":"PYUSD"}' \$API_URL/agents/<id>/send
    curl -s -H "Authorization: Bearer \$API_KEY" \$API_URL/transactions
    # approvals: the approver key approves (the sending key cannot)
    curl -s -H "Authorization: Bearer \$API_KEY" "\$API_URL/approvals?status=pending"
    curl -s -X POST -H "Authorization: Bearer \$APPROVER_KEY" \$API_URL/approvals/<ap_id>/approve
    curl -s -H "Authorization: Bearer \$API_KEY" \$API_URL/audit-log

  Ctrl-C stops everything.

EOF

# ---------------------------------------------------------------- wait
while :; do
	exited=
	st=0
	wait -n -p exited "${PIDS[@]}" || st=$?
	if [ -n "$exited" ]; then
		# Ctrl-C reaches every process of the group at once, so a child may
		# exit before our trap runs: give the trap the chance to run first.
		sleep 0.5
		name=${NAME_OF[$exited]}
		echo "---- last lines of .dev/logs/$name.log ----" >&2
		tail -n 25 "$LOGS/$name.log" >&2 || true
		die "$name exited (status $st); stopping the rest"
	fi
done
