# SPDX-License-Identifier: MIT
# A sender that stalls (frozen here; starved on a loaded machine) is the
# one at fault when its daemons give up on it: the hosts are sent to again
# without using a retry, and their reasons say the sender went silent.
# The sender is frozen (SIGSTOP) in two attempts in a row, each time once
# the daemons run the job, and let go once a daemon has given up on it;
# with --retries 1 the third attempt must still come and every host end
# ok, byte-identical.  (Charging them a retry each time, as for a host's
# own failure, failed all three after the second attempt.)
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
make_file "$src/data" $((6 << 20))

# gave_up: how many of its jobs daemon 1 has given up so far (on the
# sender, or on a neighbour that gave up on the sender first)
gave_up() {
	grep -cE "job [0-9a-f]*: (failed|the sender went away)" \
		"$WORK/daemon1.log" || true
}

# freeze_until_given_up N: once daemon 1 runs its Nth job, freeze the
# sender until daemon 1 gives that job up, then let it go
freeze_until_given_up() {
	local t
	wait_event_count "rank [0-9]* of" "$1" "job $1 running on host 1"
	kill -STOP "$sender"
	for t in $(seq 1 200); do
		[ "$(gave_up)" -ge "$1" ] && break
		sleep 0.05
	done
	kill -CONT "$sender"
	[ "$(gave_up)" -ge "$1" ] ||
		fail "daemon 1 did not give up job $1 while the sender was frozen: $(daemon_log_tail 1)"
}

# wait_event_count PATTERN N WHAT: until daemon 1's log has N lines
# matching PATTERN (10 s at most)
wait_event_count() {
	local t
	for t in $(seq 1 200); do
		[ "$(grep -c -- "$1" "$WORK/daemon1.log" || true)" -ge "$2" ] && return 0
		sleep 0.05
	done
	fail "$3 did not happen within 10 s: $(daemon_log_tail 1)"
}

# 6 MiB at 1 MiB/s: about 6 s an attempt, time enough to be caught
"$RDMCP" -v -t 1 --retries 1 --bwlimit 1M "$src/data" "$(hosts 3)" \
	>"$WORK/out" 2>"$WORK/err" &
sender=$!
on_exit "kill -KILL $sender"
freeze_until_given_up 1
freeze_until_given_up 2
rc=0
wait "$sender" || rc=$?
[ "$rc" -eq 0 ] || fail "exit $rc after two stalls: $(tail -5 "$WORK/err") $(cat "$WORK/out")"
assert_copies 3 "$src/data"
assert_no_temporaries
grep -q "attempt 3" "$WORK/err" || fail "no third attempt: $(cat "$WORK/err")"
grep -q "this sender had been silent to it for [0-9]* ms" "$WORK/err" ||
	fail "the reasons do not name the sender's silence: $(cat "$WORK/err")"
[ "$(host_lines ok "$WORK/out")" -eq 3 ] || fail "report: $(cat "$WORK/out")"
note "two stalls of the sender, three attempts, every host ok: $(grep -m1 "silent to it" "$WORK/err" | cut -c1-160)"
