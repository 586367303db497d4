# A relay frozen (SIGSTOP) mid-transfer in a 16-host binomial pipeline on
# an emulated 200 Mbit/s network, one group (--retries 0, --timeout 2): its
# connections stay open, so only the keepalive timeout can tell; the
# sender and every surviving member must learn of it within the timeout
# plus a generous margin, the report must match the disks, and once
# resumed the frozen daemon discards its job, removes its temporaries and
# serves again.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/fault16.bash"
TIMEOUT=2
BOUND=$(( (TIMEOUT + 3) * 1000 ))
fault_setup
fault_push -t $TIMEOUT
wait_mid_transfer
FAULT_US=$(now_us)
kill -STOP "${DAEMON_PIDS[$VICTIM]}"
on_exit kill -CONT "${DAEMON_PIDS[$VICTIM]}"
wait_push 30
note "froze host $VICTIM (rank 1); the sender exited $PUSH_RC"
[ "$PUSH_RC" -eq 1 ] || fail "exit $PUSH_RC: $(cat "$WORK/report" "$WORK/push.err")"
check_report
note "sender: first FAILED line after $FIRST_FAILED_MS ms, every outcome reported after $SENDER_MS ms (-t $TIMEOUT, bound $BOUND ms)"
[ "$FIRST_FAILED_MS" -ge $(( TIMEOUT * 1000 / 2 )) ] ||
	fail "noticed after $FIRST_FAILED_MS ms: not by the timeout? $(cat "$WORK/report")"
[ "$SENDER_MS" -le "$BOUND" ] || fail "the sender took $SENDER_MS ms to report"
check_members "$BOUND"
kill -CONT "${DAEMON_PIDS[$VICTIM]}"
check_victim_recovers
follow_up $(seq 2 $N)
