# SPDX-License-Identifier: MIT
# The report is the disk at scale: 256 daemons on loopback, a push with
# 16 MiB, 3 members killed and 3 frozen once it runs, a short --timeout and a
# busy-looping process, one retry.  Every host reported ok holds a byte-
# identical copy, every host reported failed holds nothing of it (killed
# ones may keep temporaries), and the same push again finds every copy
# already identical.  The
# harness is bench/scale.sh ('make bench-scale' runs it at 1,024).
. "$(dirname "$0")/../lib.sh"
[ "$(ulimit -Hn)" -ge 400 ] || { note "skipped: open file limit $(ulimit -Hn)"; exit 77; }
# (make check-asan runs fewer: RDMCP_SCALE_TEST_HOSTS)
SCALE_HOSTS=${RDMCP_SCALE_TEST_HOSTS:-256} SCALE_RUNS=2 SCALE_SIZE=16M SCALE_PORT=$PORT \
	SCALE_KILL=3 SCALE_STOP=3 SCALE_BUSY=1 SCALE_RERUN=1 SCALE_REQUIRE_OK=1 \
	SCALE_OPTS="-t 2 --retries 1" SCALE_DIR=$WORK SCALE_FLOOR=0 \
	"$TOP/bench/scale.sh" >"$WORK/scale.log" 2>&1 ||
	{ cat "$WORK/scale.log"; fail "bench-scale: report and disks disagree"; }
grep "^run:\|again:" "$WORK/scale.log" | sed 's/^/    /' | cut -c1-220
