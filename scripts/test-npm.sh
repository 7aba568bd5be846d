#!/usr/bin/env bash
# The JavaScript suites of make test: localnet's, the x402 seller's and the
# dashboard's unit tests (Vitest), one after another. make test runs this
# beside the Go tests, which spend most of their time waiting, with the
# output in .dev/test-npm.log (printed when the Go tests end).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rc=0
run() { # DIR CMD...: run CMD in DIR when DIR has a package.json
	local dir=$1
	shift
	[ -f "$dir/package.json" ] || return 0
	echo "cd $dir && $*"
	(cd "$dir" && "$@") || rc=1
}
run localnet npm test
run examples/x402-seller npm test
run web/dashboard npx vitest run
exit $rc
