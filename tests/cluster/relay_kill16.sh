# SPDX-License-Identifier: MIT
# A relay killed (SIGKILL) mid-transfer in a 16-host binomial pipeline on
# an emulated 200 Mbit/s network, one group (--retries 0): the sender and
# every surviving member learn of it within 2 s (the daemons' log lines
# carry the time), the report says exactly which hosts hold a copy and
# the disks agree, no survivor keeps a temporary, and the daemons go on
# serving.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/fault16.bash"
fault_setup
fault_push
wait_mid_transfer
FAULT_US=$(now_us)
kill_daemon $VICTIM
wait_push 30
note "killed host $VICTIM (rank 1); the sender exited $PUSH_RC"
[ "$PUSH_RC" -eq 1 ] || fail "exit $PUSH_RC: $(cat "$WORK/report" "$WORK/push.err")"
check_report
grep -q "$(cluster_addr $VICTIM):$PORT *FAILED.*went away" "$WORK/report" ||
	fail "the dead host is not named: $(cat "$WORK/report")"
note "sender: first FAILED line after $FIRST_FAILED_MS ms, every outcome reported after $SENDER_MS ms"
[ "$FIRST_FAILED_MS" -le 2000 ] || fail "the sender took $FIRST_FAILED_MS ms to notice"
[ "$SENDER_MS" -le 2000 ] || fail "the sender took $SENDER_MS ms to report"
check_members 2000
follow_up $(seq 3 $N)
