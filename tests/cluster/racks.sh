# SPDX-License-Identifier: MIT
# Two racks of four hosts behind an uplink (scripts/netns-cluster.sh
# racks): with --topology the data crosses the uplink once, whatever the
# order of the host list, every host gets an identical copy and the report
# says so; without it the binomial pipeline crosses it more often (the
# counters must see the difference, or this test proves nothing).
. "$(dirname "$0")/../lib.sh"
need_root
cluster_up 8 200mbit
"$TOP/scripts/netns-cluster.sh" racks 2 400mbit
cluster_daemons 8
src=$WORK/src
mkdir -p "$src"
for i in $(seq 2 8); do mkdir -p "$WORK/h$i$src"; done
head -c $((8 << 20)) /dev/urandom >"$src/data"
size=$(stat -c %s "$src/data")

# into_rack2: bytes the uplink has carried into rack 2 (hosts 5-8)
into_rack2() {
	"$TOP/scripts/netns-cluster.sh" uplink-bytes | awk '$1 == 2 { print $3 }'
}

# the hosts interleaved across the racks: 5, 2, 6, 3, 7, 4, 8
list=""
for i in 5 2 6 3 7 4 8; do list="$list${list:+,}$(cluster_addr "$i"):$PORT"; done
{
	echo "r1: $(cluster_addr 1),$(cluster_addr 2),$(cluster_addr 3),$(cluster_addr 4)"
	echo "r2: $(cluster_addr 5),$(cluster_addr 6),$(cluster_addr 7),$(cluster_addr 8)"
} >"$WORK/topo"

# push_racked [OPTIONS]: push with --topology from host 1, whose host
# name is its address, as the topology lists it; every host must hold an
# identical copy and be reported ok; $crossed: bytes into rack 2
push_racked() {
	local before i
	for i in $(seq 2 8); do rm -f "$WORK/h$i$src/data"; done
	before=$(into_rack2)
	expect_status 0 on_host 1 unshare --uts sh -c 'hostname "$0" && exec "$@"' \
		"$(cluster_addr 1)" "$RDMCP" -v "$@" --topology "$WORK/topo" \
		"$src/data" "$list"
	crossed=$(( $(into_rack2) - before ))
	for i in $(seq 2 8); do
		cmp -s "$src/data" "$WORK/h$i$src/data" || fail "host $i: no identical copy"
		grep -q "$(cluster_addr "$i"):$PORT *ok" "$WORK/out" ||
			fail "host $i not reported ok: $(cat "$WORK/out")"
	done
}

push_racked
note "--topology: $crossed bytes into rack 2 for a $size-byte file"
[ "$crossed" -ge "$size" ] || fail "the counter missed the data ($crossed bytes)"
[ "$crossed" -le $((size * 11 / 10)) ] ||
	fail "--topology: $crossed bytes crossed into rack 2, more than 1.1 copies"
# rack 1 (the sender's) first: hosts 2-4 hold ranks 1-3, rack 2 ranks 4-7
for i in 2 3 4 5 6 7 8; do
	want=$((i - 1))
	grep -q ": rank $want of 8" "$WORK/daemon$i.log" ||
		fail "host $i: not rank $want: $(grep ': rank' "$WORK/daemon$i.log")"
done

# the binomial pipeline across racks (each rack's own, fed from the rack
# before): the same bound
push_racked -a binomial
grep -q "binomial pipeline in 2 racks" "$WORK/err" || fail "$(cat "$WORK/err")"
note "--topology -a binomial: $crossed bytes into rack 2"
[ "$crossed" -le $((size * 11 / 10)) ] ||
	fail "-a binomial --topology: $crossed bytes into rack 2, more than 1.1 copies"

# the plain binomial pipeline, in rack order even (asked for: over TCP
# the default for this size is the chain, which crosses once)
for i in $(seq 2 8); do rm -f "$WORK/h$i$src/data"; done
before=$(into_rack2)
expect_status 0 on_host 1 "$RDMCP" -a binomial "$src/data" "$(cluster_hosts 8)"
crossed=$(( $(into_rack2) - before ))
note "binomial: $crossed bytes into rack 2"
# (about 4/3 copies: one step in three of the schedule of 8 crosses)
[ "$crossed" -gt $((size * 12 / 10)) ] ||
	fail "binomial: only $crossed bytes into rack 2: the check above cannot tell"
