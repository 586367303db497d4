# --trace when a member is killed mid-push: the push still ends within
# seconds with exit 1 and the host named, the timeline file is valid JSON
# with the sender's spans, and the killed host has no timeline (it could
# send none); no daemon is left waiting to be asked for one (each ends its
# job once the sender closes).
. "$(dirname "$0")/../lib.sh"
start_daemons 4
src=$WORK/src
mkdir -p "$src"
prepare_dirs 4 "$src"
make_file "$src/data" $((200 << 20))
trace=$WORK/trace.json
victim=2
start=$(date +%s%N)
"$RDMCP" -v --retries 0 -a chain -b 256K --trace "$trace" "$src/data" \
	"$(hosts 4)" >"$WORK/out" 2>&1 &
pid=$!
wait_event "rank [0-9]* of" "$WORK/daemon$victim.log" 10 "victim joining the group"
kill_daemon "$victim"
rc=0
wait "$pid" || rc=$?
secs=$(( ($(date +%s%N) - start) / 1000000000 ))
[ "$rc" -eq 1 ] || fail "exit $rc: $(cat "$WORK/out")"
[ "$secs" -lt 20 ] || fail "took $secs s"
grep -q "$(host_addr "$victim"):$PORT *FAILED" "$WORK/out" ||
	fail "victim not reported: $(cat "$WORK/out")"
jq -e . "$trace" >/dev/null || fail "not JSON: $(head -c 300 "$trace")"
[ "$(jq '[.traceEvents[] | select(.pid == 0 and .ph == "X")] | length' "$trace")" -gt 0 ] ||
	fail "no span of the sender"
[ "$(jq "[.traceEvents[] | select(.pid == $victim and .ph == \"X\")] | length" "$trace")" = 0 ] ||
	fail "the killed host has a timeline"
for i in 1 3 4; do
	wait_event "job .* ended\|discarding\|FAILED\|failed" "$WORK/daemon$i.log" 10 \
		"host $i ending its job"
done
note "trace: a member killed mid-push: exit 1 after ${secs} s, trace of $(jq '[.traceEvents[].pid] | unique | length' "$trace") processes"
