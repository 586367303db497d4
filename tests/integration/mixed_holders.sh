# SPDX-License-Identifier: MIT
# Hosts that each hold a different old version (different blocks
# changed), pushed again with --force in the binomial pipeline with
# receive windows of 1, 2 and the default: every push ends, every copy
# is the source's and is reported ok.  A member that holds a later send's
# block before its earlier sends' offers that one first; before c0ced16
# that offer held back its earlier sends, whose receivers waited on other
# members' offers held back the same way, round a cycle: with --window 1
# or 2 the group stalled every time, its members alive, until the
# watchdog (docs/performance.md, "The receive window").
. "$(dirname "$0")/../lib.sh"
n=6
start_daemons $n
bs=4096
src=$WORK/src
mkdir -p "$src"
stage=$WORK/stage
prepare_dirs $n "$stage"
# old I ROUND: host I's old version: the source with the blocks b where
# (b * (I + 2) + ROUND) % 5 < 2 changed, a different set on each host
old() {
	local i=$1 r=$2 b copy
	copy="$WORK/h$i$stage/data"
	cp "$src/data" "$copy"
	for b in $(seq 0 37); do
		[ $(((b * (i + 2) + r) % 5)) -lt 2 ] || continue
		printf 'old%s.%s' "$i" "$b" | dd of="$copy" bs=1 \
			seek=$((b * bs + 100)) conv=notrunc status=none
	done
}
round=0
for window in 1 2 16; do
	round=$((round + 1))
	make_file "$src/data" $((37 * bs + 5))	# 38 blocks, the last short
	for i in $(seq 1 $n); do old "$i" "$round"; done
	RDMCP_CMD_LIMIT=60 expect_status 0 "$RDMCP" --json -a binomial -b $bs \
		--window "$window" --force -d "$stage/" "$src/data" "$(hosts $n)"
	for i in $(seq 1 $n); do
		cmp -s "$src/data" "$WORK/h$i$stage/data" ||
			fail "window $window: host $i does not hold the source's bytes"
	done
	assert_json_ok "window $window" $(seq 1 $n)
	[ "$(json_sent)" -lt $((37 * bs + 5)) ] ||
		fail "window $window: sent $(json_sent), the whole file or more"
	note "window $window: sent $(json_sent) of $((37 * bs + 5))"
done
assert_no_temporaries
