# SPDX-License-Identifier: MIT
# One hung host costs the others little (issue 39, item 6).  A daemon
# that takes the connection, authenticates and the job, then never says a
# word (stopped, or stuck in its set-up; tests/helpers/fakepeer hang) held
# every healthy host until -t: the group starts only once every host has
# accepted or failed, so the healthy ones waited 30 s, and the retry, its
# -t doubled, 60 s more.  Now a host silent while it sets a job up is
# given up after --connect-timeout (a daemon sends keepalives several
# times a second while it works on a set-up, so a slow one is not taken
# for hung), in the retry too; -t stays for silences once data flows.
# The pre-authentication hang (a stopped daemon whose kernel still takes
# connections) is unproved_peer.sh's.
. "$(dirname "$0")/../lib.sh"
FAKE=$TOP/build/tests/fakepeer
start_daemons 3
src=$WORK/src
make_file "$src" 300000
prepare_dirs 3 "$WORK/stage"
"$FAKE" hang "$(host_addr 4)" "$PORT" "$RDMCP_KEY" 120 >"$WORK/fake.log" &
on_exit "kill -TERM -$! 2>/dev/null"
wait_event '^listening' "$WORK/fake.log" 5 "fakepeer hang listening"

# -t 30, --connect-timeout 1: the watchdog's 20 s would end a push that
# waits on -t
RDMCP_CMD_LIMIT=20 expect_status 1 "$RDMCP" -v -t 30 --connect-timeout 1 \
	--retries 1 -d "$WORK/stage" "$src" "$(hosts 4)"
grep -q '^job' "$WORK/fake.log" || fail "the sender never sent the hung host its job"
[ "$(grep -c '^job' "$WORK/fake.log")" -eq 2 ] ||
	fail "not retried once: $(cat "$WORK/fake.log")"
grep -q "^$(host_addr 4):$PORT *FAILED .*said nothing for 1000 ms while it set the job up (--connect-timeout): a hung daemon" \
	"$WORK/out" || fail "hung host: $(cat "$WORK/out" "$WORK/err")"
for i in 1 2 3; do
	cmp -s "$src" "$WORK/h$i$WORK/stage/src" || fail "host $i holds no copy"
	# ok long before -t: the hung host cost it about --connect-timeout
	t=$(grep "^$(host_addr "$i"):$PORT *ok" "$WORK/out" | awk '{ print $3 }')
	awk -v t="$t" 'BEGIN { exit !(t != "" && t < 10) }' ||
		fail "host $i ok after ${t:-?} s: $(cat "$WORK/out")"
done
note "$(grep "FAILED" "$WORK/out" | head -1)"
assert_no_temporaries
