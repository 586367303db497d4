# SPDX-License-Identifier: MIT
# A daemon killed mid-transfer: the sender exits 1 within seconds, names the
# host, and no host has a partial file under the final name; the killed
# daemon, started again, removes the temporaries it left.  With --trace the
# timeline still comes out whole (valid JSON, the sender's spans, none of
# the killed host's) without holding the push up.
. "$(dirname "$0")/../lib.sh"
start_daemons 8
src=$WORK/src
mkdir -p "$src"
prepare_dirs 8 "$src"
make_file "$src/data" $((200 << 20))
for victim in 3 1 8; do
	rm -f "$WORK"/h*"$src"/data
	: >"$WORK/daemon$victim.log"
	trace=$WORK/trace$victim.json
	"$RDMCP" -v -a chain -b 256K --trace "$trace" "$src/data" "$(hosts 8)" \
		>"$WORK/out" 2>&1 &
	pid=$!
	# kill once the victim has joined the running group
	wait_event "rank [0-9]* of" "$WORK/daemon$victim.log" 10 \
		"victim $victim joining the group"
	kill_daemon "$victim"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 1 ] || fail "victim $victim: exit $rc: $(cat "$WORK/out")"
	# noticed by its connections dropping, not by a timeout running out
	# (a time bound here failed under valgrind on a loaded machine: the
	# retry of the 200 MiB push, not the noticing, took the time)
	addr="$(host_addr "$victim" | sed 's/\./\\./g'):$PORT"
	first=$(grep -m1 -E "^rdmcp: .*(failed|group broken).*$addr" "$WORK/out") ||
		fail "victim $victim: no failure line: $(cat "$WORK/out")"
	echo "$first" | grep -q -E "went away|lost|reset|refused" ||
		fail "victim $victim: noticed by other means: $first"
	! echo "$first" | grep -q -E "silent|timed out|timeout" ||
		fail "victim $victim: noticed by a timeout: $first"
	grep -q "$(host_addr "$victim"):$PORT *FAILED" "$WORK/out" ||
		fail "victim $victim not reported: $(cat "$WORK/out")"
	jq -e . "$trace" >/dev/null || fail "victim $victim: trace not JSON"
	[ "$(jq '[.traceEvents[] | select(.pid == 0 and .ph == "X")] | length' "$trace")" -gt 0 ] ||
		fail "victim $victim: no span of the sender in the trace"
	[ "$(jq "[.traceEvents[] | select(.pid == $victim and .ph == \"X\")] | length" "$trace")" = 0 ] ||
		fail "victim $victim: the killed host has a timeline"
	for i in $(seq 1 8); do
		f=$(landed "$i" "$src/data")
		[ ! -e "$f" ] || cmp -s "$f" "$src/data" ||
			fail "host $i holds a partial file under the final name"
	done
	# survivors removed their temporaries (the victim could not)
	for i in $(seq 1 8); do
		[ "$i" -eq "$victim" ] && continue
		left=$(find "$WORK/h$i" -name '.*.rdmcp-*' | head -1)
		[ -z "$left" ] || fail "host $i left $left"
	done
	left=$(find "$WORK/h$victim" -name '.*.rdmcp-*' | wc -l)
	[ "$left" -gt 0 ] || fail "victim $victim left no temporary to sweep"
	restart_daemon "$victim"
	[ -z "$(find "$WORK/h$victim" -name '.*.rdmcp-*')" ] ||
		fail "victim $victim: restarted, its temporaries remain"
	grep -q "removed $left temporaries left by jobs" "$WORK/daemon$victim.log" ||
		fail "victim $victim: $(tail -3 "$WORK/daemon$victim.log")"
	[ -z "$(ls "$WORK/state$victim")" ] || fail "records left: $(ls "$WORK/state$victim")"
done
# records of finished jobs are gone everywhere
for i in $(seq 1 8); do
	[ -z "$(ls "$WORK/state$i")" ] || fail "host $i kept records: $(ls "$WORK/state$i")"
done
