# SPDX-License-Identifier: MIT
# One host of six much slower than the others (its NIC at 1/8 of theirs):
# rdmcp finds it during the push (in the chain chosen for this size, and
# in the binomial pipeline), says so, and sends again with it last in a
# chain; every host gets an identical copy and is reported ok, the slow
# one as slow.  With --slow wait, and on a uniform cluster, nothing is
# found slow (or this test could not fail on a detector that always
# fires).
. "$(dirname "$0")/../lib.sh"
need_root
# links that never pass a block faster than their rate (a bucket of 32 KiB,
# packets of at most 16 KiB), as a NIC would: the 256 KiB bucket the other
# tests use lets an idle link pass two blocks at memory speed
export RDMCP_NS_BURST=32kb RDMCP_NS_GSO=16384
cluster_up 7 200mbit
cluster_daemons 7
src=$WORK/src
mkdir -p "$src"
for i in $(seq 2 7); do mkdir -p "$WORK/h$i$src"; done
head -c $((12 << 20)) /dev/urandom >"$src/data"
slow=3

# push [OPTIONS]: from host 1 to hosts 2..7; each must then hold an
# identical copy and be reported ok
push() {
	local i
	for i in $(seq 2 7); do rm -f "$WORK/h$i$src/data"; done
	expect_status 0 on_host 1 "$RDMCP" "$@" "$src/data" "$(cluster_hosts 7)"
	for i in $(seq 2 7); do
		cmp -s "$src/data" "$WORK/h$i$src/data" ||
			fail "host $i: no identical copy"
	done
}

# rank_of I: host I's rank in the last push (-vv lines)
rank_of() {
	sed -n "s/^$(cluster_addr "$1"):$PORT .*rank \([0-9]*\)).*/\1/p" "$WORK/out"
}

# found_slow: the last push named the slow host, sent again with it last,
# and reported it ok and slow, and no other host slow
found_slow() {
	local addr
	addr=$(cluster_addr "$slow"):$PORT
	grep -q "slow: $addr (blocks came in at .*sending again, to it last, in a chain" \
		"$WORK/err" || fail "the slow host was not named: $(cat "$WORK/err")"
	[ "$(grep -c "^rdmcp: slow:" "$WORK/err")" = 1 ] || fail "more than one slow line"
	grep -q "^$addr *ok .* slow " "$WORK/out" ||
		fail "the slow host's line does not say slow: $(cat "$WORK/out")"
	grep -q "^$addr: ok, slow (1 host" "$WORK/out" ||
		fail "no grouped line for the slow host: $(cat "$WORK/out")"
	[ "$(grep -c "^[^ ]* *ok .* slow " "$WORK/out")" = 1 ] || fail "a fast host reported slow: $(cat "$WORK/out")"
	# last of the second attempt (in a chain the first hosts may be done
	# before the slow one is found: their lines keep their first rank)
	[ "$(rank_of "$slow")" = "$(sed -n 's/.*rank \([0-9]*\))$/\1/p' "$WORK/out" |
		sort -n | tail -1)" ] ||
		fail "the slow host is not last: $(cat "$WORK/out")"
	note "$(grep "slow member" "$WORK/err")"
	note "found slow: $(grep "^rdmcp: slow:" "$WORK/err")"
	note "$(tail -1 "$WORK/out")"
}

"$TOP/scripts/netns-cluster.sh" shape "$slow" 25mbit
# 96 blocks for 7 members: the chain is chosen (sched_auto_alg)
push -vv
grep -q "chain schedule (chosen)" "$WORK/err" ||
	fail "not the chosen chain: $(head -3 "$WORK/err")"
found_slow
push -vv -a binomial
found_slow

push --slow wait --json
grep -q "slow" "$WORK/err" && fail "--slow wait regrouped: $(cat "$WORK/err")"
[ "$(grep -c '"event":"replica".*"ok":true.*"slow":false' "$WORK/out")" = 6 ] ||
	fail "--slow wait: not 6 hosts ok and not slow: $(cat "$WORK/out")"

"$TOP/scripts/netns-cluster.sh" shape "$slow" 200mbit
push --json
grep -q "slow" "$WORK/err" && fail "uniform cluster: $(cat "$WORK/err")"
[ "$(grep -c '"event":"replica".*"ok":true.*"slow":false' "$WORK/out")" = 6 ] ||
	fail "uniform: not 6 hosts ok and not slow: $(cat "$WORK/out")"
grep '"event":"replica"' "$WORK/out" | grep -q '"link_rate":0,' &&
	fail "a host's rate in was not measured: $(cat "$WORK/out")"
note "uniform: $(grep -o '"link_rate":[0-9]*' "$WORK/out" | tr '\n' ' ')"
