# SPDX-License-Identifier: MIT
# A relay's link cut (its NIC down) mid-transfer in a 16-host binomial
# pipeline on an emulated 200 Mbit/s network, one group (--retries 0,
# --timeout 2): no packet says so, only the keepalive timeout can tell.
# The sender, every surviving member and the cut-off host itself must
# learn of it within the timeout plus a generous margin, the report must
# match the disks, no temporaries remain, and once the link is back the
# daemon serves again.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/fault16.bash"
TIMEOUT=2
BOUND=$(( (TIMEOUT + 3) * 1000 ))
fault_setup
fault_push -t $TIMEOUT
wait_mid_transfer
FAULT_US=$(now_us)
ip -n "$RDMCP_NS-h$VICTIM" link set eth0 down
check_timed_out "cut host $VICTIM (rank 1) off"
# the cut-off daemon runs on: it must notice by itself, in time too
check_victim_recovers
[ "$(stamp_ms "$(member_ends $VICTIM)")" -le "$BOUND" ] ||
	fail "host $VICTIM noticed too late"
ip -n "$RDMCP_NS-h$VICTIM" link set eth0 up
follow_up $(seq 2 $N)
