# SPDX-License-Identifier: MIT
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
check_timed_out "froze host $VICTIM (rank 1)"
kill -CONT "${DAEMON_PIDS[$VICTIM]}"
check_victim_recovers
follow_up $(seq 2 $N)
