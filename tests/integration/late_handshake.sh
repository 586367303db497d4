# SPDX-License-Identifier: MIT
# A host whose daemon stops between two attempts, after it answered its
# ABORT (a casualty, never silent, so not a suspect), does not hold the
# retry's set-up for all of --connect-timeout: once the other hosts are
# ready and it has had the suspects' grace, its handshake is cut short,
# as the attempt after sends to it again ("left for the next attempt");
# there, a suspect, it fails still silent.  The others end ok, and the
# report is their disks (issue 37, faults: at 250 hosts 19 of 54 retry
# set-ups waited 5 s so).
# Host 4 is busy with another transfer (--max-jobs 1), so that the first
# retry waits a second: the stop lands between the attempts.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
start_daemon 4 --max-jobs 1
wait_listening "$(host_addr 4)" || fail "daemon 4 did not start"
src=$WORK/src
make_file "$src" $((16 << 20))
make_file "$WORK/slow" $((3 << 20))
prepare_dirs 4 "$WORK/stage"

"$RDMCP" --bwlimit 1M -d "$WORK/stage" "$WORK/slow" "$(host_addr 4):$PORT" \
	>"$WORK/outA" 2>&1 &
pidA=$!
on_exit "kill -KILL $pidA"
wait_event "rank 1 of 2" "$WORK/daemon4.log" 10 "the long transfer's start on host 4"

"$RDMCP" -v --retries 2 -t 2 --connect-timeout 60 -a chain --bwlimit 2M \
	-d "$WORK/stage" "$src" "$(hosts 4)" >"$WORK/out" 2>"$WORK/err" &
sender=$!
on_exit "kill -KILL $sender"
wait_receiving 3 "$WORK/stage"
kill_daemon 2
wait_event "retrying .*in 1 s: 1 was busy" "$WORK/err" 20 "the first retry, a second off"
freeze_daemon 3
# --connect-timeout 60 alone would take longer (the attempts after the
# stop take some 20 s: host 1 and host 4 each get what they lack at 2 MiB/s)
wait_exit "$sender" 45
kill -CONT "${DAEMON_PIDS[3]}"
[ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$WORK/out" "$WORK/err")"
h3=$(host_addr 3):$PORT
grep -q "^rdmcp: $h3 failed (its daemon had not answered the handshake [0-9]* ms after the other hosts were ready: left for the next attempt); will retry" \
	"$WORK/err" || fail "host 3's handshake not cut short: $(cat "$WORK/err")"
grep -q "^$h3 *FAILED .*still silent" "$WORK/out" ||
	fail "host 3's report: $(cat "$WORK/out")"
assert_ok_copies "$src" "$WORK/stage/src" 1
assert_not_landed "$WORK/stage/src" 2 3
# host 4, busy in some attempts: its report is its disk
if grep -q "^$(host_addr 4):$PORT *ok" "$WORK/out"; then
	cmp -s "$src" "$(landed 4 "$WORK/stage/src")" || fail "host 4 ok, its copy differs"
else
	assert_not_landed "$WORK/stage/src" 4
fi
note "$(grep "^rdmcp: $h3 failed (its daemon" "$WORK/err" | cut -c1-160)"
wait "$pidA" || fail "the long transfer failed: $(cat "$WORK/outA")"
wait_job_ended 3
start_daemon 2
wait_listening "$(host_addr 2)" || fail "daemon 2 did not start again"
assert_no_temporaries
