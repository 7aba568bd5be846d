#!/usr/bin/env bash
# Installs Debian's chromium when /usr/bin/chromium is missing: the
# dashboard's browser tests drive it with playwright-core (which downloads
# no browser of its own).
set -euo pipefail

[ -x /usr/bin/chromium ] && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "browser-deps: error: /usr/bin/chromium is missing and there is no apt-get: install Chromium" >&2; exit 1; }
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}
echo "browser-deps: installing Debian's chromium for the browser tests" >&2
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
[ -x /usr/bin/chromium ] || { echo "browser-deps: error: /usr/bin/chromium still missing" >&2; exit 1; }
