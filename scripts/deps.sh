#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# deps.sh build|test - make sure what 'make' (build) or 'make check'
# (test) needs is installed, before anything is built: the Makefile runs
# it first, so that on a fresh Debian 12 'make demo' and 'make check' are
# the whole set-up.
#
# Silent when nothing is missing.  Otherwise it says in one line what is
# missing and why root is needed, then, as root, installs it with
# scripts/install-deps.sh (apt-get) and checks again; not as root, it says
# to run 'sudo scripts/install-deps.sh' and exits 1.  Exit status: 0 when
# everything is there (at last), 1 when it is not.
#
#   build: make, a C compiler ($CC, else cc), pkg-config ($PKG_CONFIG) and
#          the pkg-config modules libuv zlib libibverbs librdmacm nettle
#          libxxhash
#   test:  build, the pkg-config module check, and every package of
#          install-deps.sh (dpkg-query says which are missing; without dpkg,
#          the commands the tests run: mandoc groff zsh jq ip script)
#
# Environment: CC, PKG_CONFIG (as the Makefile's); INSTALL_DEPS, the
# installer to run (default scripts/install-deps.sh; the tests give a
# stand-in).
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LEVEL=${1:-build}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
CC=${CC:-cc}
INSTALL_DEPS=${INSTALL_DEPS:-$TOP/scripts/install-deps.sh}
MODULES=(libuv zlib libibverbs librdmacm nettle libxxhash)
TEST_COMMANDS=(mandoc groff zsh jq ip script)

case $LEVEL in
build | test) ;;
*) echo "usage: deps.sh build|test" >&2; exit 2 ;;
esac

# missing LEVEL: what is missing, one word each ("libuv (pkg-config)")
missing() {
	local m cmd
	command -v make >/dev/null 2>&1 || echo make
	# only the compiler's first word: CC may be "ccache gcc", "gcc -m32"
	command -v "${CC%% *}" >/dev/null 2>&1 || echo "C compiler ($CC)"
	if ! command -v "${PKG_CONFIG%% *}" >/dev/null 2>&1; then
		echo "$PKG_CONFIG"
		return 0
	fi
	for m in "${MODULES[@]}"; do
		$PKG_CONFIG --exists "$m" 2>/dev/null || echo "$m (pkg-config)"
	done
	[ "$1" = test ] || return 0
	$PKG_CONFIG --exists check 2>/dev/null || echo "check (pkg-config)"
	if command -v dpkg-query >/dev/null 2>&1 && [ -x "$INSTALL_DEPS" ]; then
		"$INSTALL_DEPS" --missing all 2>/dev/null || true
	else
		for cmd in "${TEST_COMMANDS[@]}"; do
			command -v "$cmd" >/dev/null 2>&1 || echo "$cmd"
		done
	fi
}

what=$(missing "$LEVEL" | sort -u | paste -sd, - | sed 's/,/, /g')
[ -z "$what" ] && exit 0
for_what=$([ "$LEVEL" = build ] && echo "to build rdmcp" || echo "to run the tests")

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing $for_what: $what." >&2
	echo "deps: install them with 'sudo scripts/install-deps.sh' (apt-get needs root), then run make again." >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: missing $for_what: $what; install them with your package manager (scripts/install-deps.sh knows Debian's names)." >&2
	exit 1
fi
echo "deps: missing $for_what: $what: installing them now with scripts/install-deps.sh $([ "$LEVEL" = build ] && echo build || echo all) (apt-get, as root)" >&2
"$INSTALL_DEPS" "$([ "$LEVEL" = build ] && echo build || echo all)" >&2 || {
	echo "deps: scripts/install-deps.sh failed" >&2
	exit 1
}
what=$(missing "$LEVEL" | sort -u | paste -sd, - | sed 's/,/, /g')
if [ -n "$what" ]; then
	echo "deps: still missing after installing: $what" >&2
	exit 1
fi
exit 0
