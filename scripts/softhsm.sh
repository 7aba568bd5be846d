#!/usr/bin/env bash
# Installs Debian's softhsm2 (a PKCS#11 token in files, with Ed25519) and
# opensc (pkcs11-tool) when missing: the PKCS#11 signer's tests make their
# own tokens in it. Quiet when both are there.
set -euo pipefail

command -v softhsm2-util >/dev/null 2>&1 && command -v pkcs11-tool >/dev/null 2>&1 && exit 0
command -v apt-get >/dev/null 2>&1 || { echo "softhsm: error: softhsm2-util or pkcs11-tool is missing and there is no apt-get: install SoftHSM2 and OpenSC" >&2; exit 1; }
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}
echo "softhsm: installing Debian's softhsm2 and opensc for the PKCS#11 signer's tests" >&2
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends softhsm2 opensc >&2
command -v softhsm2-util >/dev/null 2>&1 && command -v pkcs11-tool >/dev/null 2>&1 || { echo "softhsm: error: softhsm2-util or pkcs11-tool still missing" >&2; exit 1; }
