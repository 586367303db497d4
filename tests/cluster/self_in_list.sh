# SPDX-License-Identifier: MIT
# The sender in its own host list (a whole-cluster host file that forgot
# to leave it out): a usage error naming the host and how to leave it out,
# before any daemon is contacted; by address (host 1's own 198.18 address)
# and by host name, short or with a domain.  Loopback addresses stay
# allowed (every loopback test runs its daemons on 127.0.0.x).
. "$(dirname "$0")/../lib.sh"
need_root
cluster_up 3
cluster_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
make_file "$src/data" 100000
me=$(cluster_addr 1):$PORT
nothing_sent() {
	[ ! -e "$WORK/h2$src/data" ] && [ ! -e "$WORK/h3$src/data" ] ||
		fail "$1: a file landed"
	! grep -q " job " "$WORK/daemon2.log" "$WORK/daemon3.log" ||
		fail "$1: a daemon was contacted"
}
expect_status 2 on_host 1 "$RDMCP" "$src/data" "$me,$(cluster_hosts 3)"
[ "$(head -1 "$WORK/err")" = "rdmcp: $me is this host (the sender); leave it out, e.g. -x $me" ] ||
	fail "by address: $(cat "$WORK/err")"
nothing_sent "by address"
note "by address: $(head -1 "$WORK/err")"
for name in node07 NODE07.cluster.example; do
	expect_status 2 on_host 1 unshare --uts bash -c \
		'hostname node07.cluster.example && exec "$@"' - \
		"$RDMCP" "$src/data" "$(cluster_hosts 3),$name:$PORT"
	grep -q "^rdmcp: $name:$PORT is this host (the sender); leave it out, e.g. -x $name:$PORT\$" \
		"$WORK/err" || fail "by name $name: $(cat "$WORK/err")"
	nothing_sent "by name $name"
done
note "by name: $(head -1 "$WORK/err")"
# as the message says: -x leaves it out, and the copy goes ahead
expect_status 0 on_host 1 "$RDMCP" -x "$me" "$src/data" "$me,$(cluster_hosts 3)"
for i in 2 3; do
	cmp -s "$src/data" "$WORK/h$i$src/data" || fail "host $i: no copy"
done
# a machine playing several hosts on addresses of its own (as the RDMA VM
# does): with --bind, only the bound address is this host
other=198.18.0.200
ip -n "$RDMCP_NS-h1" addr add "$other/15" dev eth0
expect_status 2 on_host 1 "$RDMCP" "$src/data" "$other:$PORT"
grep -q "^rdmcp: $other:$PORT is this host" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 2 on_host 1 "$RDMCP" --bind "$(cluster_addr 1)" "$src/data" "$me"
grep -q "^rdmcp: $me is this host" "$WORK/err" || fail "$(cat "$WORK/err")"
# (nothing listens there: the host fails, but it is not refused as self)
expect_status 1 on_host 1 "$RDMCP" --bind "$(cluster_addr 1)" "$src/data" "$other:$PORT"
