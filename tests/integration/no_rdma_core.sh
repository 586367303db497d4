# SPDX-License-Identifier: MIT
# Without rdma-core: rdmcp does not link libibverbs or librdmacm, it loads
# them when RDMA is first asked for.  On a host where libibverbs cannot be
# loaded (here: /dev/null mounted over it, in a mount namespace of this
# test's own), a daemon with the default transport serves over TCP and
# says why in its log, a push to it lands, a sender that asks for verbs
# fails with the daemon's reason, and a daemon told to serve RDMA refuses
# to start, naming the library and what to install.
if [ -z "${RDMCP_NO_RDMA_NS:-}" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (a mount namespace)"; exit 77; }
	command -v unshare >/dev/null || { echo "SKIP: no unshare"; exit 77; }
	RDMCP_NO_RDMA_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
ldd "$RDMCP" | grep -q "libibverbs\|librdmacm" &&
	fail "rdmcp links rdma-core: $(ldd "$RDMCP" | grep "verbs\|rdmacm")"
lib=$(ldconfig -p | awk '$1 == "libibverbs.so.1" { print $NF; exit }')
[ -n "$lib" ] || { echo "SKIP: no libibverbs.so.1 to hide"; exit 77; }
mount --bind /dev/null "$(readlink -f "$lib")"
why="RDMA needs rdma-core's libibverbs.so.1, which cannot be loaded (.*): install rdma-core's libraries (Debian: libibverbs1, librdmacm1), or use --transport tcp"

# a daemon told to serve RDMA does not start, and says why
mkdir -p "$WORK/h1"
expect_status 4 "$RDMCP" --serve --transport verbs --listen "$(host_addr 1):$PORT" \
	--prefix "$WORK/h1"
grep -q "^rdmcp: $why\$" "$WORK/err" || fail "serve --transport verbs: $(cat "$WORK/err")"

# the default transport: TCP only, and the log says why
start_daemons 1
grep -q "no RDMA, serving over TCP only: $why\$" "$WORK/daemon1.log" ||
	fail "daemon log: $(cat "$WORK/daemon1.log")"
src=$WORK/src
mkdir -p "$src"
prepare_dirs 1 "$src"
make_file "$src/data" 300000
expect_status 0 "$RDMCP" "$src/data" "$(hosts 1)"
assert_copies 1 "$src/data"
grep -q "over tcp$" "$WORK/out" || fail "push: $(cat "$WORK/out")"

# a sender that asks for verbs gets the daemon's answer, and nothing lands
rm -f "$WORK/h1$src/data"
expect_status 1 "$RDMCP" --transport verbs "$src/data" "$(hosts 1)"
grep -q "FAILED.*this daemon serves no RDMA" "$WORK/out" || fail "verbs push: $(cat "$WORK/out")"
[ ! -e "$WORK/h1$src/data" ] || fail "the verbs push left a file"
assert_no_temporaries
