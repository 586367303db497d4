# SPDX-License-Identifier: MIT
# A job of 2^32 blocks (a 2 TiB sparse file in 512-byte blocks) that the
# daemon allows (--max-blocks 4G) does not freeze it: while that job runs,
# a second push to the same daemon completes; and the big one, stopped,
# leaves nothing behind.  (Its schedule's set-up once scanned every step
# on the daemon's loop, answering nobody for two minutes: security issue
# 40.  Nothing is timed: the second push would give up on a frozen daemon
# after its 30 s --timeout, and every wait is bounded.)
. "$(dirname "$0")/../lib.sh"
if [ -n "${RDMCP_DAEMON_WRAP:-}" ]; then	# e.g. valgrind: no 2 TiB mapping
	note "skipped: the daemon maps 2 TiB, more than a wrapped one may"
	exit 77
fi
start_daemons 1 --max-blocks 4G
src=$WORK/src
mkdir -p "$src"
prepare_dirs 1 "$src"
truncate -s 2T "$src/huge" || { note "skipped: no 2 TiB sparse file here"; exit 77; }

# slowly (1 MiB/s), so that it runs for the rest of the test, lightly
"$RDMCP" -v -S -b 512 --bwlimit 1M "$src/huge" "$(hosts 1)" \
	>"$WORK/huge.out" 2>&1 &
huge=$!
on_exit 'if [ -n "$huge" ]; then kill -KILL "$huge"; wait "$huge"; fi'
wait_event "job [0-9a-f]*: rank 1 of 2" "$WORK/daemon1.log" 60 \
	"the 2^32-block job's START on host 1"
grep -q "4294967296 blocks of 512 B" "$WORK/huge.out" ||
	fail "not the job meant: $(head -3 "$WORK/huge.out")"

# the daemon answers another sender meanwhile
make_file "$src/small" 300000
expect_status 0 "$RDMCP" "$src/small" "$(hosts 1)"
assert_copies 1 "$src/small"
kill -0 "$huge" 2>/dev/null ||
	fail "the 2^32-block push is over already: $(tail -3 "$WORK/huge.out")"
note "a push to the daemon landed while it ran a job of 2^32 blocks"

# stopped, the big job's 2 TiB temporary goes
kill -TERM "$huge"
rc=0
wait "$huge" || rc=$?
huge=
[ "$rc" = 143 ] || fail "the stopped push exited $rc: $(tail -3 "$WORK/huge.out")"
wait_event "discarding\|failed" "$WORK/daemon1.log" 60 "the daemon discarding the job"
for t in $(seq 1 100); do
	[ -z "$(find "$WORK"/h* -name '.*.rdmcp-*' | head -1)" ] && break
	sleep 0.05
done
assert_no_temporaries
[ ! -e "$(landed 1 "$src/huge")" ] || fail "the stopped job landed"
note "stopped, it left nothing"
