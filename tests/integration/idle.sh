# SPDX-License-Identifier: MIT
# An idle daemon sleeps: once a push has ended and a connection that never
# authenticated has been dropped by the gate (and the drop logged), its
# event loop makes no system call at all, so a thousand daemons on a
# machine, or one on each node of a cluster, cost no CPU and add no
# jitter between jobs.
# Counted by the main thread's context switches (/proc/PID/task/PID):
# they must stay the same over 3 s, within 20 s of the last event.
. "$(dirname "$0")/../lib.sh"
start_daemons 1 -t 2
src=$WORK/src
mkdir -p "$src"
prepare_dirs 1 "$src"
make_file "$src/data" 300000
pid=${DAEMON_PIDS[1]}

# switches: the daemon's main thread's context switches so far
switches() {
	awk '/ctxt_switches/ { n += $2 } END { print n }' \
		"/proc/$pid/task/$pid/status"
}

# wait_asleep WHAT: until the main thread switches no more over 3 s
# (checked every 0.5 s), at most 20 s; fails saying WHAT it did after
wait_asleep() {
	local start now before t
	start=$(date +%s)
	while :; do
		before=$(switches)
		for t in 1 2 3 4 5 6; do
			sleep 0.5
			[ "$(switches)" -eq "$before" ] || break
		done
		[ "$(switches)" -eq "$before" ] && [ "$t" -eq 6 ] && break
		now=$(date +%s)
		[ $((now - start)) -lt 20 ] ||
			fail "$1: the daemon still wakes: $before -> $(switches) context switches in 3 s"
	done
	note "$1: no wake-up in 3 s, asleep $(($(date +%s) - start)) s after"
}

expect_status 0 "$RDMCP" "$src/data" "$(hosts 1)"
assert_copies 1 "$src/data"
wait_asleep "after a push"

# a connection that never authenticates, trickling a byte a second (so
# that the gate drops it, not the idle timeout): dropped at the gate's
# deadline (-t 2), logged, then nothing is left to wake for
"$TOP/build/tests/flood" "$(host_addr 1)" "$PORT" 1 4 - hold >"$WORK/flood.out"
grep -q "dropped 1 " "$WORK/flood.out" || fail "trickling: $(cat "$WORK/flood.out")"
wait_event "1 not authenticated within 2000 ms" "$WORK/daemon1.log" 10 \
	"the gate's report of the dropped connection"
wait_asleep "after a dropped connection"
