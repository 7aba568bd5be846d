#!/usr/bin/env bash
# Ensures PostgreSQL and Redis for local development and tests.
#
#   scripts/services.sh [start]   use the servers on 127.0.0.1:5432 / :6379 when
#                                 they answer, else start private ones under .dev/
#                                 (installing the Debian packages when missing);
#                                 prints `export NAME=value` lines on stdout
#   scripts/services.sh dev-redis ensure `make dev`'s own Redis, which asks a
#                                 password (generated once into
#                                 .dev/redis-dev/password, mode 0600), on
#                                 127.0.0.1:DEV_REDIS_PORT (63798); prints
#                                 `export REDIS_URL=...` with the password
#   scripts/services.sh stop      stop the private servers (leaves their data)
#   scripts/services.sh status    say what is running
#
# Typical use:  eval "$(scripts/services.sh)"
# The same values are written to .dev/services.env (NAME=value lines).
# Progress goes to stderr. Safe to run repeatedly and concurrently.
# Ports: SYSTEM_PG_PORT (5432), SYSTEM_REDIS_PORT (6379) are probed;
# PRIVATE_PG_PORT (54329), PRIVATE_REDIS_PORT (63799) are used for private ones.
#
# Variables printed: DATABASE_URL, REDIS_URL (the application database and
# Redis), TEST_DATABASE_URL, TEST_REDIS_URL (the server-level URLs Go tests use).
# The tests' Redis asks no password; `make dev` runs on its own (dev-redis),
# which does, as every deployed Redis does.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEV="$ROOT/.dev"

SYS_PG_HOST=127.0.0.1 SYS_PG_PORT=${SYSTEM_PG_PORT:-5432}
SYS_REDIS_HOST=127.0.0.1 SYS_REDIS_PORT=${SYSTEM_REDIS_PORT:-6379}
PRIV_PG_PORT=${PRIVATE_PG_PORT:-54329}
PRIV_REDIS_PORT=${PRIVATE_REDIS_PORT:-63799}
DEV_REDIS_PORT=${DEV_REDIS_PORT:-63798}
DB_NAME=agentwallet

PG_DATA="$DEV/postgres"
REDIS_DIR="$DEV/redis"
DEV_REDIS_DIR="$DEV/redis-dev"
LOG_DIR="$DEV/logs"

log() { printf 'services: %s\n' "$*" >&2; }
die() { printf 'services: error: %s\n' "$*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

# tcp_open HOST PORT: whether something accepts TCP connections there.
tcp_open() {
	(exec 3<>"/dev/tcp/$1/$2") >/dev/null 2>&1
}

# pg_ok HOST PORT: a server answers and lets user postgres in without a password.
pg_ok() {
	local host=$1 port=$2
	if have psql; then
		PGCONNECT_TIMEOUT=3 psql -X -q -w -h "$host" -p "$port" -U postgres -d postgres -Atc 'SELECT 1' >/dev/null 2>&1
	elif have pg_isready; then
		pg_isready -q -t 3 -h "$host" -p "$port" >/dev/null 2>&1
	else
		tcp_open "$host" "$port"
	fi
}

# redis_ok HOST PORT [PASSWORD]: a Redis answers PING (after AUTH with
# PASSWORD, given through the environment, never a command line).
redis_ok() {
	local host=$1 port=$2
	if have redis-cli; then
		[ "$(REDISCLI_AUTH=${3:-} timeout 3 redis-cli -h "$host" -p "$port" ping 2>/dev/null)" = PONG ]
	else
		# Speak the protocol by hand: an inline PING gets +PONG.
		PW=${3:-} timeout 3 bash -c '
			exec 3<>"/dev/tcp/$0/$1" || exit 1
			if [ -n "$PW" ]; then
				printf "AUTH %s\r\n" "$PW" >&3
				IFS= read -r line <&3
				[[ $line == "+OK"* ]] || exit 1
			fi
			printf "PING\r\n" >&3
			IFS= read -r line <&3
			[[ $line == "+PONG"* ]]' "$host" "$port" 2>/dev/null
	fi
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif have sudo && sudo -n true 2>/dev/null; then
		sudo -n "$@"
	else
		die "need root to run: $* (install it yourself, or run as root)"
	fi
}

APT_UPDATED=
apt_install() {
	have apt-get || die "cannot install $* here: no apt-get (install PostgreSQL and Redis yourself)"
	log "installing $* with apt-get"
	if [ -z "$APT_UPDATED" ]; then
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		APT_UPDATED=1
	fi
	# policy-rc.d-less containers may try to start the packaged services;
	# that is harmless: we check what answers afterwards.
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

pg_bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -n "$d" ] && [ -x "$d/initdb" ]; then
		echo "$d"
	elif have initdb && have pg_ctl; then
		dirname "$(command -v initdb)"
	fi
}

# detached CMD...: runs a command that leaves a daemon behind with no
# inherited descriptors beyond stdio (the lock, a caller's pipes), so the
# daemon never holds our lock or keeps a caller's `$(...)` waiting.
detached() {
	(
		local fd
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"
		done
		"$@"
	) </dev/null
}

# PostgreSQL refuses to run as root: when root, the private server runs as
# the "postgres" system user (created by the Debian package).
PG_USER=
pg_run() {
	if [ -n "$PG_USER" ]; then
		runuser -u "$PG_USER" -- "$@"
	else
		"$@"
	fi
}

# Where the private server's socket lives: .dev/pgsock, unless that path is
# too long for a Unix socket name (108 bytes).
pg_sockdir() {
	local d="$DEV/pgsock"
	if [ $((${#d} + 20)) -ge 100 ]; then
		d="${TMPDIR:-/tmp}/agentwallet-pgsock-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)"
	fi
	echo "$d"
}

start_private_pg() {
	local bindir sockdir
	bindir=$(pg_bindir)
	if [ -z "$bindir" ]; then
		apt_install postgresql
		bindir=$(pg_bindir)
		[ -n "$bindir" ] || die "PostgreSQL binaries not found after installing postgresql"
	fi
	if [ "$(id -u)" -eq 0 ]; then
		PG_USER=postgres
		getent passwd postgres >/dev/null || useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
	fi
	sockdir=$(pg_sockdir)
	mkdir -p "$PG_DATA" "$sockdir" "$LOG_DIR"
	touch "$LOG_DIR/postgres.log"
	if [ -n "$PG_USER" ]; then
		chown "$PG_USER" "$PG_DATA" "$sockdir" "$LOG_DIR/postgres.log"
		chmod 700 "$PG_DATA"
		runuser -u "$PG_USER" -- test -w "$PG_DATA" ||
			die "user $PG_USER cannot reach $PG_DATA (a parent directory is not searchable by others); move the checkout or run as a non-root user"
	fi
	if [ ! -s "$PG_DATA/PG_VERSION" ]; then
		log "initdb $PG_DATA"
		pg_run "$bindir/initdb" -D "$PG_DATA" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$LOG_DIR/initdb.log" 2>&1 ||
			pg_run "$bindir/initdb" -D "$PG_DATA" -U postgres --auth=trust --encoding=UTF8 --no-locale >"$LOG_DIR/initdb.log" 2>&1 ||
			die "initdb failed: see $LOG_DIR/initdb.log"
	fi
	if pg_run "$bindir/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
		:
	else
		log "starting private PostgreSQL on 127.0.0.1:$PRIV_PG_PORT (data in $PG_DATA)"
		detached pg_run "$bindir/pg_ctl" -D "$PG_DATA" -l "$LOG_DIR/postgres.log" -w -t 60 \
			-o "-c listen_addresses=127.0.0.1 -p $PRIV_PG_PORT -k $sockdir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
			start >/dev/null || die "PostgreSQL did not start: see $LOG_DIR/postgres.log"
	fi
	local i
	for i in $(seq 1 60); do
		pg_ok 127.0.0.1 "$PRIV_PG_PORT" && return 0
		sleep 0.5
	done
	die "private PostgreSQL on 127.0.0.1:$PRIV_PG_PORT does not answer: see $LOG_DIR/postgres.log"
}

start_private_redis() {
	if ! have redis-server; then
		apt_install redis-server
		have redis-server || die "redis-server not found after installing redis-server"
	fi
	mkdir -p "$REDIS_DIR" "$LOG_DIR"
	if redis_ok 127.0.0.1 "$PRIV_REDIS_PORT"; then
		return 0
	fi
	log "starting private Redis on 127.0.0.1:$PRIV_REDIS_PORT (data in $REDIS_DIR)"
	detached redis-server --bind 127.0.0.1 --port "$PRIV_REDIS_PORT" --save '' --appendonly no \
		--daemonize yes --dir "$REDIS_DIR" --pidfile "$REDIS_DIR/redis.pid" \
		--logfile "$LOG_DIR/redis.log" >/dev/null
	local i
	for i in $(seq 1 40); do
		redis_ok 127.0.0.1 "$PRIV_REDIS_PORT" && return 0
		sleep 0.25
	done
	die "private Redis on 127.0.0.1:$PRIV_REDIS_PORT does not answer: see $LOG_DIR/redis.log"
}

# cmd_dev_redis: `make dev`'s Redis, asking a password as deployed ones
# do, kept apart from the tests' (which flush their databases). The
# password and the configuration holding it stay in .dev/redis-dev (0700).
cmd_dev_redis() {
	if ! have redis-server; then
		apt_install redis-server
		have redis-server || die "redis-server not found after installing redis-server"
	fi
	mkdir -p "$DEV_REDIS_DIR" "$LOG_DIR"
	chmod 700 "$DEV_REDIS_DIR"
	local pwfile="$DEV_REDIS_DIR/password" conf="$DEV_REDIS_DIR/redis.conf" pw
	if [ ! -s "$pwfile" ]; then
		(umask 077 && od -An -N24 -tx1 /dev/urandom | tr -d ' \n' >"$pwfile.tmp") && mv -f "$pwfile.tmp" "$pwfile"
	fi
	chmod 600 "$pwfile"
	pw=$(cat "$pwfile")
	if ! redis_ok 127.0.0.1 "$DEV_REDIS_PORT" "$pw"; then
		if tcp_open 127.0.0.1 "$DEV_REDIS_PORT"; then
			die "port $DEV_REDIS_PORT answers, but not as this checkout's development Redis (another checkout's?): pick another port, DEV_REDIS_PORT=<port> make dev"
		fi
		(umask 077 && printf 'bind 127.0.0.1\nport %s\nrequirepass %s\nsave ""\nappendonly no\ndir %s\npidfile %s\nlogfile %s\ndaemonize yes\n' \
			"$DEV_REDIS_PORT" "$pw" "$DEV_REDIS_DIR" "$DEV_REDIS_DIR/redis.pid" "$LOG_DIR/redis-dev.log" >"$conf")
		log "starting private Redis for development on 127.0.0.1:$DEV_REDIS_PORT (password in $pwfile)"
		detached redis-server "$conf" >/dev/null
		local i
		for i in $(seq 1 40); do
			redis_ok 127.0.0.1 "$DEV_REDIS_PORT" "$pw" && break
			[ "$i" -lt 40 ] || die "private Redis on 127.0.0.1:$DEV_REDIS_PORT does not answer: see $LOG_DIR/redis-dev.log"
			sleep 0.25
		done
	fi
	log "Redis for development: 127.0.0.1:$DEV_REDIS_PORT, with a password"
	printf "export REDIS_URL='redis://:%s@127.0.0.1:%s/0'\n" "$pw" "$DEV_REDIS_PORT"
}

emit() {
	local pg_port=$1 redis_port=$2 out tmp
	out=$(
		printf 'DATABASE_URL=postgres://postgres@127.0.0.1:%s/%s?sslmode=disable\n' "$pg_port" "$DB_NAME"
		printf 'REDIS_URL=redis://127.0.0.1:%s/0\n' "$redis_port"
		printf 'TEST_DATABASE_URL=postgres://postgres@127.0.0.1:%s/postgres?sslmode=disable\n' "$pg_port"
		printf 'TEST_REDIS_URL=redis://127.0.0.1:%s\n' "$redis_port"
	)
	tmp="$DEV/services.env.$$"
	printf '%s\n' "$out" >"$tmp" && mv -f "$tmp" "$DEV/services.env"
	printf '%s\n' "$out" | sed "s/^\([A-Z_]*\)=\(.*\)$/export \1='\2'/"
}

cmd_start() {
	local pg_port redis_port
	if pg_ok "$SYS_PG_HOST" "$SYS_PG_PORT"; then
		pg_port=$SYS_PG_PORT
		log "PostgreSQL: using $SYS_PG_HOST:$SYS_PG_PORT"
	else
		log "PostgreSQL: nothing usable on $SYS_PG_HOST:$SYS_PG_PORT (trust auth for user postgres)"
		start_private_pg
		pg_port=$PRIV_PG_PORT
		log "PostgreSQL: using private 127.0.0.1:$PRIV_PG_PORT"
	fi
	if redis_ok "$SYS_REDIS_HOST" "$SYS_REDIS_PORT"; then
		redis_port=$SYS_REDIS_PORT
		log "Redis: using $SYS_REDIS_HOST:$SYS_REDIS_PORT"
	else
		log "Redis: nothing answers on $SYS_REDIS_HOST:$SYS_REDIS_PORT"
		start_private_redis
		redis_port=$PRIV_REDIS_PORT
		log "Redis: using private 127.0.0.1:$PRIV_REDIS_PORT"
	fi
	emit "$pg_port" "$redis_port"
}

cmd_stop() {
	local bindir stopped=
	if [ -s "$PG_DATA/PG_VERSION" ]; then
		bindir=$(pg_bindir)
		[ "$(id -u)" -eq 0 ] && PG_USER=postgres
		if [ -n "$bindir" ] && pg_run "$bindir/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
			log "stopping private PostgreSQL"
			pg_run "$bindir/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null
			stopped=1
		fi
	fi
	local dir
	for dir in "$REDIS_DIR" "$DEV_REDIS_DIR"; do
		[ -s "$dir/redis.pid" ] || continue
		local pid
		pid=$(cat "$dir/redis.pid")
		if kill -0 "$pid" 2>/dev/null && grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null; then
			log "stopping private Redis ${dir#"$ROOT"/} (pid $pid)"
			kill "$pid"
			local i
			for i in $(seq 1 40); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.25
			done
			stopped=1
		fi
		rm -f "$dir/redis.pid"
	done
	rm -f "$DEV/services.env"
	[ -n "$stopped" ] || log "no private servers were running"
}

cmd_status() {
	local s
	pg_ok "$SYS_PG_HOST" "$SYS_PG_PORT" && s=up || s=down
	echo "postgres  $SYS_PG_HOST:$SYS_PG_PORT  $s"
	pg_ok 127.0.0.1 "$PRIV_PG_PORT" && s=up || s=down
	echo "postgres  127.0.0.1:$PRIV_PG_PORT (private)  $s"
	redis_ok "$SYS_REDIS_HOST" "$SYS_REDIS_PORT" && s=up || s=down
	echo "redis     $SYS_REDIS_HOST:$SYS_REDIS_PORT  $s"
	redis_ok 127.0.0.1 "$PRIV_REDIS_PORT" && s=up || s=down
	echo "redis     127.0.0.1:$PRIV_REDIS_PORT (private)  $s"
	redis_ok 127.0.0.1 "$DEV_REDIS_PORT" "$(cat "$DEV_REDIS_DIR/password" 2>/dev/null)" && s=up || s=down
	echo "redis     127.0.0.1:$DEV_REDIS_PORT (make dev's, with a password)  $s"
}

mkdir -p "$DEV"
# One run at a time: concurrent `make test` and `make dev` must not both initdb.
if have flock; then
	exec 9>"$DEV/services.lock"
	flock -w 300 9 || die "timed out waiting for another scripts/services.sh"
fi

case "${1:-start}" in
start) cmd_start ;;
dev-redis) cmd_dev_redis ;;
stop) cmd_stop ;;
status) cmd_status ;;
-h | --help | help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
*) die "unknown command ${1} (want start, dev-redis, stop or status)" ;;
esac
