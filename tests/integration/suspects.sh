# SPDX-License-Identifier: MIT
# A member frozen mid-push (SIGSTOP: its kernel still takes connections)
# is found out by -t and costs the others that once (issue 37, faults).
# In the retry it is a suspect: once every other host is ready, the group
# waits for it as long again as they took, a quarter of -t (less than
# --connect-timeout here) at least, then starts without it ("still
# silent"),
# and it is not tried a third time (a hung daemon, like a refused
# connection: once more, no more).  Before, the retry held every host
# for the hung handshake's --connect-timeout (30 s here), and a third
# attempt for it alone as long again.  The others resume what they held
# and end ok; the report is their disks.
# A second member frozen in that retry is found out after -t as given,
# not the -t lengthened for the retry (in case the first was only
# overloaded): the first one still silent, it was hung.
# And a member frozen while its group breaks for another reason (a
# daemon killed) does not hold the abort for -t: once the other members
# have answered their ABORT and it has had as long again (a quarter of
# -t at least), it fails as silent, and the retry goes on without it.
. "$(dirname "$0")/../lib.sh"
start_daemons 5
src=$WORK/src
# 16 MiB at 2 MiB/s: a window of 8 s to find a block landed on the host
# to freeze, wide enough for a machine loaded by a parallel make check
make_file "$src" $((16 << 20))
prepare_dirs 5 "$WORK/stage"

# push_frozen V HOSTS OPTIONS...: push $src as a chain at 2 MiB/s (8 s)
# to HOSTS in the background (its PID in sender), and freeze host V's
# daemon once a block has landed there
push_frozen() {
	local v=$1 list=$2
	shift 2
	"$RDMCP" -v --retries 2 -a chain --bwlimit 2M -d "$WORK/stage" "$@" \
		"$src" "$list" >"$WORK/out" 2>"$WORK/err" &
	sender=$!
	on_exit "kill -KILL $sender"
	wait_receiving "$v" "$WORK/stage"
	freeze_daemon "$v"
}

# host 2, second in line, frozen
push_frozen 2 "$(hosts 4)" -t 1 --connect-timeout 30
# the retry holds the others for a quarter of -t (doubled after the
# silence: 2 s), not for the 30 s of --connect-timeout: 25 s is far
# below 2 x 30
wait_exit "$sender" 25
kill -CONT "${DAEMON_PIDS[2]}"
[ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$WORK/out" "$WORK/err")"

h2=$(host_addr 2):$PORT
grep -q "^rdmcp: $h2 failed (the daemon at $h2 said nothing for 1000 ms (--timeout)" \
	"$WORK/err" || fail "host 2 not found out by -t 1: $(cat "$WORK/err")"
grep -q "^$h2 *FAILED .* still silent: it had not answered [0-9]* ms after the other hosts were ready, and it went silent in the attempt before" \
	"$WORK/out" || fail "host 2's report: $(cat "$WORK/out")"
[ "$(grep -c "retrying" "$WORK/err")" -eq 1 ] ||
	fail "not one retry: $(grep retrying "$WORK/err")"
for i in 1 3 4; do
	grep -q "^$(host_addr "$i"):$PORT *ok .*held already" "$WORK/out" ||
		fail "host $i did not resume: $(cat "$WORK/out")"
	cmp -s "$src" "$(landed "$i" "$WORK/stage/src")" ||
		fail "host $i reported ok, its copy differs"
done
assert_not_landed "$WORK/stage/src" 2
note "$(grep "^$h2 *FAILED" "$WORK/out" | cut -c1-160)"
wait_job_ended 2
assert_no_temporaries

# a chain of 5 at -t 30: host 4 frozen, then host 2's daemon killed; the
# abort would wait 30 s for host 4, the whole push takes far less (host
# 4 is cut after a quarter of -t, and left out of the retry after a
# quarter of --connect-timeout)
rm -f "$WORK"/h*"$WORK/stage/src"
for i in 2 4; do : >"$WORK/daemon$i.log"; done
push_frozen 4 "$(hosts 5)" -t 30 --connect-timeout 8
kill_daemon 2
wait_exit "$sender" 25
kill -CONT "${DAEMON_PIDS[4]}"
[ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$WORK/out" "$WORK/err")"
h4=$(host_addr 4):$PORT
grep -q "^rdmcp: $h4 failed (the daemon at $h4 said nothing for [0-9]* ms after it was asked to stop, when the other members had answered" \
	"$WORK/err" || fail "host 4 not cut from the abort: $(cat "$WORK/err")"
grep -q "^$h4 *FAILED .* still silent" "$WORK/out" ||
	fail "host 4's report: $(cat "$WORK/out")"
assert_ok_copies "$src" "$WORK/stage/src" 1 3 5
assert_not_landed "$WORK/stage/src" 2 4
note "$(grep "^$h4 *FAILED" "$WORK/out" | cut -c1-160)"
wait_job_ended 4
# the killed daemon's temporary goes when it starts again
start_daemon 2
wait_listening "$(host_addr 2)" || fail "daemon 2 did not start again"
assert_no_temporaries

# host 3's daemon frozen before the push: its handshake lapses after
# --connect-timeout (8 s), it is retried once as a suspect, and with no
# other host to wait for, its silent handshake is given a quarter of
# that (2 s), not 8 s again, and no third attempt
rm -f "$WORK"/h*"$WORK/stage/src"
freeze_daemon 3
"$RDMCP" -v --retries 2 -t 30 --connect-timeout 8 -d "$WORK/stage" "$src" \
	"$(host_addr 3):$PORT" >"$WORK/out" 2>"$WORK/err" &
sender=$!
on_exit "kill -KILL $sender"
wait_exit "$sender" 30
kill -CONT "${DAEMON_PIDS[3]}"
[ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$WORK/out" "$WORK/err")"
h3=$(host_addr 3):$PORT
grep -q "^$h3 *FAILED .* still silent: its daemon had not answered the handshake [0-9]* ms into the attempt" \
	"$WORK/out" || fail "host 3's report: $(cat "$WORK/out" "$WORK/err")"
[ "$(grep -c "retrying" "$WORK/err")" -eq 1 ] ||
	fail "not one retry: $(grep retrying "$WORK/err")"
assert_not_landed "$WORK/stage/src" 3
note "$(grep "^$h3 *FAILED" "$WORK/out" | cut -c1-160)"
assert_no_temporaries

# host 2 frozen, then host 3 frozen in the retry: -t, doubled for the
# retry, goes back to 1 s once host 2 is left out as still silent, and
# host 3 is found out after 1 s of silence, not 2
rm -f "$WORK"/h*"$WORK/stage/src"
for i in 2 3; do : >"$WORK/daemon$i.log"; done
push_frozen 2 "$(hosts 4)" -t 1 --connect-timeout 30
wait_event "the 1 host silent in the attempt before is still silent: -t back to 1000 ms" \
	"$WORK/err" 20 "the retry going back to -t 1"
for t in $(seq 1 200); do
	[ "$(grep -c "rank [0-9]* of" "$WORK/daemon3.log")" -ge 2 ] && break
	sleep 0.1
done
[ "$(grep -c "rank [0-9]* of" "$WORK/daemon3.log")" -ge 2 ] ||
	fail "host 3 never ran the retry: $(tail -n 5 "$WORK/daemon3.log")"
freeze_daemon 3
wait_exit "$sender" 30
kill -CONT "${DAEMON_PIDS[2]}" "${DAEMON_PIDS[3]}"
[ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$WORK/out" "$WORK/err")"
grep -q "^rdmcp: $h3 failed (the daemon at $h3 said nothing for 1000 ms (--timeout)" \
	"$WORK/err" || fail "host 3 not found out after -t 1 in the retry: $(cat "$WORK/err")"
assert_ok_copies "$src" "$WORK/stage/src" 1 4
assert_not_landed "$WORK/stage/src" 2 3
note "$(grep "^rdmcp: $h3 failed (the daemon" "$WORK/err" | cut -c1-120)"
for i in 2 3; do wait_job_ended "$i"; done
assert_no_temporaries
