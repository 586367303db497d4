# SPDX-License-Identifier: MIT
# --retries counts a host's own failures, not its group's: a host that only
# lost its group because another host failed is sent to again without
# using a retry.  With --retries 1, one member killed in the first attempt
# and another in the retry: the retry's casualties get a third attempt
# and end ok, each victim is reported failed, and the first victim (which
# failed on its own in both attempts, the second time refusing the
# connection) is not in the third attempt.
. "$(dirname "$0")/../lib.sh"
N=8
start_daemons $N
src=$WORK/src
mkdir -p "$src"
prepare_dirs $N "$src"
make_file "$src/data" $((64 << 20))
# a paced chain keeps each attempt under way for seconds
timeout 120 "$RDMCP" -v --json --retries 1 -a chain -b 256K --bwlimit 20M "$src/data" \
	"$(hosts $N)" >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_event "rank [0-9]* of" "$WORK/daemon3.log" 10 "host 3 joining the group"
wait_event "rank [0-9]* of" "$WORK/daemon6.log" 10 "host 6 joining the group"
: >"$WORK/daemon6.log"	# its next "rank" line is the retry's
kill_daemon 3
wait_event "retrying" "$WORK/err" 20 "the retry"
wait_event "rank [0-9]* of" "$WORK/daemon6.log" 20 "host 6 joining the retry"
kill_daemon 6
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 1 ] || fail "exit $rc: $(cat "$WORK/out" "$WORK/err")"
# the retry lines give the bound of a host's own failures, and how many
# hosts were not counted
[ "$(grep -c "retrying" "$WORK/err")" -eq 2 ] ||
	fail "not two retries: $(cat "$WORK/err")"
grep -q "retrying 8 hosts that failed (attempt 2: retry 1 of at most 1; 7 only lost their group, not counted against --retries 1)" \
	"$WORK/err" || fail "second attempt: $(cat "$WORK/err")"
grep -q "retrying 7 hosts that failed (attempt 3: retry 1 of at most 1; 6 only lost their group, not counted against --retries 1)" \
	"$WORK/err" || fail "third attempt: $(cat "$WORK/err")"
jq -es '.[-1] | .event == "summary" and .attempts == 3 and .complete == 6
	and .failed == 2' "$WORK/out" >/dev/null || fail "summary: $(tail -1 "$WORK/out")"
for i in $(seq 1 $N); do
	want=true
	case $i in 3 | 6) want=false ;; esac
	jq -es --arg h "$(host_addr $i):$PORT" --argjson ok $want \
		'[.[] | select(.event == "replica" and .host == $h)] |
		 length == 1 and .[0].ok == $ok' "$WORK/out" >/dev/null ||
		fail "host $i: not reported ok=$want once: $(cat "$WORK/out")"
done
for i in 3 6; do
	[ ! -e "$(landed $i "$src/data")" ] || fail "host $i holds a final file"
done
for i in 1 2 4 5 7 8; do
	cmp -s "$src/data" "$(landed $i "$src/data")" || fail "host $i: no good copy"
	left=$(find "$WORK/h$i" -name '.*.rdmcp-*' | head -1)
	[ -z "$left" ] || fail "host $i left $left"
done
note "$(grep -c retrying "$WORK/err") retries: $(grep -o '"attempts":[0-9]*' "$WORK/out")"
