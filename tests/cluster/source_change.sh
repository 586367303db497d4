# SPDX-License-Identifier: MIT
# A source that changes while it is sent is never delivered: the members
# land only on the sender's final go, which it gives only if no source
# changed (size, times, identity) since it opened them.  Grown, rewritten
# in place, truncated (the sender's mapping then faults): no host keeps a
# copy, no temporaries remain, the daemons go on serving, and the exit
# status is 3 (the sender's trouble, not the hosts'); with --retries the
# next attempt sends the file as it now is, and the push says why.
. "$(dirname "$0")/../lib.sh"
need_root
N=4
cluster_up $N 200mbit
cluster_daemons $N
src=$WORK/src
mkdir -p "$src"
prepare_dirs $N "$src"

# change_during WHAT RETRIES: push a fresh 24 MiB file (about 1 s per
# hop at 200 Mbit/s) and run WHAT on it once blocks reach host 2 (rank 1,
# the sender's first target): mid-transfer; sets RC.
change_during() {
	make_file "$src/data" $((24 << 20))
	RC=0
	: >"$WORK/daemon2.log"
	on_host 1 timeout 120 "$RDMCP" -v --retries "$2" -b 256K "$src/data" \
		"$(cluster_hosts $N)" >"$WORK/out" 2>"$WORK/err" &
	local pid=$!
	wait_event "rank 1 of" "$WORK/daemon2.log" 10 "host 2 joining the group"
	wait_blocks "$WORK/h2" 10
	eval "$1"
	wait "$pid" || RC=$?
}

# nothing_landed: no host holds the file or a temporary of it.
nothing_landed() {
	local i t
	for i in $(seq 2 $N); do
		[ ! -e "$WORK/h$i$src/data" ] || fail "$1: host $i kept a copy"
	done
	for t in $(seq 1 50); do	# members discard as they learn
		[ -z "$(find "$WORK" -path "$WORK/h*" -name '.*.rdmcp-*')" ] &&
			return 0
		sleep 0.1
	done
	assert_no_temporaries
}

change_during 'head -c 4096 /dev/urandom >>"$src/data"' 0
[ "$RC" -eq 3 ] || fail "grown: exit $RC: $(cat "$WORK/out" "$WORK/err")"
! grep -q "failed:" "$WORK/err" || fail "grown: hosts blamed: $(cat "$WORK/err")"
[ "$(grep -cE "^[^ ]+ +FAILED +[0-9.]+ s .*changed while it was sent" "$WORK/out")" -eq $((N - 1)) ] ||
	fail "grown: $(cat "$WORK/out")"
nothing_landed grown

change_during 'printf XXXX | dd of="$src/data" bs=1 seek=100 conv=notrunc 2>/dev/null' 0
[ "$RC" -eq 3 ] || fail "rewritten: exit $RC: $(cat "$WORK/out" "$WORK/err")"
grep -q "changed while it was sent" "$WORK/out" || fail "rewritten: $(cat "$WORK/out")"
nothing_landed rewritten

# truncated: the sender either finds it, or its mapping faults (SIGBUS);
# exit 3 with a message that names the source either way, no host
# blamed, none lands a copy
change_during 'truncate -s 1M "$src/data"' 0
[ "$RC" -eq 3 ] || fail "truncated: exit $RC: $(cat "$WORK/out" "$WORK/err")"
grep -q "changed while it was sent\|shrank while it was being sent" "$WORK/out" "$WORK/err" ||
	fail "truncated: $(cat "$WORK/out" "$WORK/err")"
! grep -q "Bad address\|failed:" "$WORK/out" "$WORK/err" ||
	fail "truncated: a host blamed: $(cat "$WORK/out" "$WORK/err")"
nothing_landed truncated
note "truncated source: exit $RC"

# with a retry, the file as it is after the change
change_during 'head -c 4096 /dev/urandom >>"$src/data"' 1
[ "$RC" -eq 0 ] || fail "retry: exit $RC: $(cat "$WORK/out" "$WORK/err")"
grep -q "retrying" "$WORK/err" || fail "no retry: $(cat "$WORK/err")"
grep -q "changed while it was sent: sending it again as it is now" "$WORK/err" ||
	fail "the change was not said: $(cat "$WORK/err")"
for i in $(seq 2 $N); do
	cmp -s "$src/data" "$WORK/h$i$src/data" || fail "retry: host $i"
done
assert_no_temporaries
