# SPDX-License-Identifier: MIT
# A member frozen after its go to land, in a group that then breaks for
# another reason, does not hold the abort for -t (issue 37, faults).
# Chain of 4: host 2's daemon frozen (SIGSTOP) once a block landed there;
# hosts 3 and 4 behind it stall, host 1 takes every block, the sender
# sends everyone the go; then host 4's daemon is killed and the group
# breaks.  Host 2 got its go, so it may have landed: once host 3 has
# answered the abort and host 2 has had a quarter of -t, its daemon is
# asked anew whether its copy landed (it cannot answer: failed, its copy
# maybe landed), instead of waiting -t (24 s) to find it silent.  Host 1
# landed, host 3 resumes in the retry; the report is their disks.
# And a chain's tail frozen before it holds every block, once the others
# have landed: a quarter of -t of silence (not -t), and its daemon is
# asked, for a quarter of --connect-timeout (not all of it: silent for
# so long, it is hung, and a retry would wait that long for its answer).
. "$(dirname "$0")/../lib.sh"
start_daemons 4
src=$WORK/src
make_file "$src" $((4 << 20))
prepare_dirs 4 "$WORK/stage"

"$RDMCP" -v --retries 1 -t 24 --connect-timeout 4 -a chain --bwlimit 2M \
	-d "$WORK/stage" "$src" "$(hosts 4)" >"$WORK/out" 2>"$WORK/err" &
sender=$!
on_exit "kill -KILL $sender"
wait_receiving 2 "$WORK/stage"
freeze_daemon 2
wait_event "every block is out" "$WORK/err" 20 "the go"
kill_daemon 4
# -t 24 alone would take longer than this
wait_exit "$sender" 21
kill -CONT "${DAEMON_PIDS[2]}"
[ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$WORK/out" "$WORK/err")"

h2=$(host_addr 2):$PORT
grep -q "^rdmcp: $h2 failed (the daemon at $h2 said nothing for [0-9]* ms after it was asked to stop, when the other members had answered.*; then its daemon could not be asked whether its copy landed" \
	"$WORK/err" || fail "host 2 not asked after the abort: $(cat "$WORK/err")"
grep -q "^$h2 *FAILED .*its copy may" "$WORK/out" ||
	fail "host 2's report: $(cat "$WORK/out")"
assert_ok_copies "$src" "$WORK/stage/src" 1 3
assert_not_landed "$WORK/stage/src" 2
note "$(grep "^$h2 *FAILED" "$WORK/out" | cut -c1-200)"
wait_job_ended 2
start_daemon 4
wait_listening "$(host_addr 4)" || fail "daemon 4 did not start again"
assert_no_temporaries

# host 3, the tail of a chain of 3, frozen while blocks come in: hosts 1
# and 2 land; -t 24 alone would take longer, and so would the question
# with all of --connect-timeout 8 on top of the quarter of -t (6 + 8 s)
rm -f "$WORK"/h*"$WORK/stage/src"
: >"$WORK/daemon3.log"
"$RDMCP" -v --retries 0 -t 24 --connect-timeout 8 -a chain --bwlimit 2M \
	-d "$WORK/stage" "$src" "$(hosts 3)" >"$WORK/out" 2>"$WORK/err" &
sender=$!
on_exit "kill -KILL $sender"
wait_receiving 3 "$WORK/stage"
freeze_daemon 3
wait_event "every block is out" "$WORK/err" 20 "the go"
wait_exit "$sender" 12
kill -CONT "${DAEMON_PIDS[3]}"
[ "$RC" -eq 1 ] || fail "tail: exit $RC: $(cat "$WORK/out" "$WORK/err")"
h3=$(host_addr 3):$PORT
grep -q "^$h3 *FAILED .*then its daemon could not be asked whether its copy landed (the daemon at $h3 did not prove it holds the key within 2000 ms (a quarter of --connect-timeout, 250 ms at least, as it had gone silent)" \
	"$WORK/out" || fail "host 3's report: $(cat "$WORK/out" "$WORK/err")"
assert_ok_copies "$src" "$WORK/stage/src" 1 2
assert_not_landed "$WORK/stage/src" 3
note "$(grep "^$h3 *FAILED" "$WORK/out" | cut -c1-200)"
wait_job_ended 3 30
assert_no_temporaries
