# SPDX-License-Identifier: MIT
# A member frozen mid-push (SIGSTOP: its kernel still takes connections)
# is found out by -t and costs the others that once (issue 37, faults).
# In the retry it is a suspect: once every other host is ready, the group
# waits for it as long again, then starts without it ("still silent"),
# and it is not tried a third time (a hung daemon, like a refused
# connection: once more, no more).  Before, the retry held every host
# for the hung handshake's --connect-timeout (30 s here), and a third
# attempt for it alone as long again.  The others resume what they held
# and end ok; the report is their disks.
. "$(dirname "$0")/../lib.sh"
start_daemons 4
src=$WORK/src
make_file "$src" $((8 << 20))
prepare_dirs 4 "$WORK/stage"

# wait_gone PID SECS: until the child PID has exited; its status in RC
wait_gone() {
	local t
	for t in $(seq 1 $(($2 * 20))); do
		if ! kill -0 "$1" 2>/dev/null; then
			RC=0
			wait "$1" || RC=$?
			return 0
		fi
		sleep 0.05
	done
	fail "pid $1 still running after $2 s: $(tail -5 "$WORK/err")"
}

# a chain at 2 MiB/s: 4 s, host 2 second in line
"$RDMCP" -v -t 1 --connect-timeout 30 --retries 2 -a chain --bwlimit 2M \
	-d "$WORK/stage" "$src" "$(hosts 4)" >"$WORK/out" 2>"$WORK/err" &
sender=$!
on_exit "kill -KILL $sender"
on_exit "kill -CONT ${DAEMON_PIDS[2]}"
wait_event "rank 2 of" "$WORK/daemon2.log" 10 "host 2 running the job"
wait_blocks "$WORK/h2$WORK/stage" 10
kill -STOP "${DAEMON_PIDS[2]}"
# the retry holds the others for about as long as they took to be ready,
# not for the 30 s of --connect-timeout: 25 s is far below 2 x 30
wait_gone "$sender" 25
kill -CONT "${DAEMON_PIDS[2]}"
[ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$WORK/out" "$WORK/err")"

h2=$(host_addr 2):$PORT
grep -q "^rdmcp: $h2 failed (connection to $h2 lost: Connection timed out); will retry" \
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
[ ! -e "$(landed 2 "$WORK/stage/src")" ] || fail "host 2 holds the file"
note "$(grep "^$h2 *FAILED" "$WORK/out" | cut -c1-160)"
wait_event "job [0-9a-f]*: \(failed\|the sender went away\|ended by\)" \
	"$WORK/daemon2.log" 20 "host 2 ending its job once let go"
assert_no_temporaries
