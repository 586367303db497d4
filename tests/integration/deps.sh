# SPDX-License-Identifier: MIT
# The fresh-machine path of 'make demo' and 'make check' (scripts/deps.sh),
# simulated: a pkg-config that finds nothing until a stand-in installer
# (INSTALL_DEPS) has run.  Not root: make stops before building, naming
# what is missing and 'sudo scripts/install-deps.sh', and installs
# nothing.  Root: one line says what is installed and why, the installer
# runs, and the check passes; an installer that fails or does not help is
# an error.  With everything installed: silent.
. "$(dirname "$0")/../lib.sh"
stub=$WORK/stub
mkdir -p "$stub"
chmod 755 "$WORK" "$stub"
cat >"$stub/pkg-config" <<STUB
#!/bin/sh
[ -e "$stub/installed" ] && exec pkg-config "\$@"
exit 1
STUB
# installers: each lists nothing as missing (--missing, the packages of
# the test level), and records how it was asked to install
installer() {
	printf '#!/bin/sh\n[ "$1" = --missing ] && exit 0\necho "$*" >"%s/called"\n%s\n' \
		"$stub" "$2" >"$stub/$1"
}
installer install-ok "touch '$stub/installed'"
installer install-fails "exit 1"
installer install-useless ":"
chmod 755 "$stub"/*
export INSTALL_DEPS=$stub/install-ok
# the makes below build a tree of their own, not the one of a make that
# runs this test (make check-asan exports its B, BIN, CFLAGS, LDFLAGS;
# make check its DEPS=no: a command line variable reaches the environment)
unset MAKEFLAGS MFLAGS MAKELEVEL B BIN CFLAGS LDFLAGS DEPS

# as_user CMD...: CMD as an unprivileged user (we may be one already)
as_user() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	else
		"$@"
	fi
}

# 1. not root: 'make demo' stops at the check, before building, and says
# what to run; nothing is installed (in a copy of the tree that the
# unprivileged user may read)
mkdir "$WORK/tree"
cp -r "$TOP/Makefile" "$TOP/scripts" "$TOP/src" "$TOP/cmd" "$WORK/tree/"
chmod -R a+rX "$WORK/tree"
expect_status 2 as_user make -C "$WORK/tree" --no-print-directory \
	PKG_CONFIG="$stub/pkg-config" demo
grep -q "^deps: missing to build rdmcp: .*libuv (pkg-config)" "$WORK/err" ||
	fail "not root: $(cat "$WORK/err")"
grep -q "install them with 'sudo scripts/install-deps.sh' (apt-get needs root), then run make again" \
	"$WORK/err" || fail "not root: $(cat "$WORK/err")"
! grep -q "^cc \|demo: " "$WORK/out" "$WORK/err" || fail "built or ran: $(cat "$WORK/out")"
[ ! -e "$WORK/tree/build" ] || fail "not root, yet something was built"
[ ! -e "$stub/called" ] || fail "not root, yet the installer ran"
note "not root: $(head -1 "$WORK/err" | cut -c1-90)..."

# 2. everything there: silent, both levels
expect_status 0 "$TOP/scripts/deps.sh" build
expect_status 0 "$TOP/scripts/deps.sh" test
[ ! -s "$WORK/out" ] && [ ! -s "$WORK/err" ] || fail "not silent: $(cat "$WORK/err")"
expect_status 2 "$TOP/scripts/deps.sh" everything
expect_status 0 "$TOP/scripts/install-deps.sh" --missing build
expect_status 2 "$TOP/scripts/install-deps.sh" --missing some

if [ "$(id -u)" -ne 0 ]; then
	note "not root: the installing half is not tried"
	exit 0
fi
# 3. root: one line says what and why, the installer runs (build level),
# and the check passes
PKG_CONFIG=$stub/pkg-config expect_status 0 "$TOP/scripts/deps.sh" build
grep -qx "deps: missing to build rdmcp: libibverbs (pkg-config), librdmacm (pkg-config), libuv (pkg-config), libxxhash (pkg-config), nettle (pkg-config), zlib (pkg-config): installing them now with scripts/install-deps.sh build (apt-get, as root)" \
	"$WORK/err" || fail "root: $(cat "$WORK/err")"
[ "$(cat "$stub/called")" = build ] || fail "installer: $(cat "$stub/called" 2>&1)"
note "root: $(head -1 "$WORK/err" | cut -c1-90)..."
# make check's level installs everything (all)
rm -f "$stub/installed" "$stub/called"
PKG_CONFIG=$stub/pkg-config expect_status 0 "$TOP/scripts/deps.sh" test
[ "$(cat "$stub/called")" = all ] || fail "test level: $(cat "$stub/called" 2>&1)"
grep -q "missing to run the tests: check (pkg-config), .*installing them now with scripts/install-deps.sh all" \
	"$WORK/err" || fail "test level: $(cat "$WORK/err")"
# 4. an installer that fails, or installs what does not help: status 1
rm -f "$stub/installed"
INSTALL_DEPS=$stub/install-fails PKG_CONFIG=$stub/pkg-config \
	expect_status 1 "$TOP/scripts/deps.sh" build
grep -q "scripts/install-deps.sh failed" "$WORK/err" || fail "$(cat "$WORK/err")"
INSTALL_DEPS=$stub/install-useless PKG_CONFIG=$stub/pkg-config \
	expect_status 1 "$TOP/scripts/deps.sh" build
grep -q "still missing after installing: .*libuv (pkg-config)" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
# 5. root, through make: the same make that installs builds, with the
# pkg-config answers of after the installation
rm -f "$stub/installed" "$stub/called"
expect_status 0 make -C "$WORK/tree" --no-print-directory CFLAGS=-O0 \
	PKG_CONFIG="$stub/pkg-config" rdmcp
grep -q "^deps: missing to build rdmcp: .*installing them now" "$WORK/err" ||
	fail "make: $(cat "$WORK/err")"
[ "$(cat "$stub/called")" = build ] || fail "make: installer: $(cat "$stub/called" 2>&1)"
"$WORK/tree/rdmcp" --version | grep -q "^rdmcp [0-9]" || fail "the rdmcp built does not run"
note "make as root: installed (stand-in), then built ./rdmcp"
