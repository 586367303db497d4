# SPDX-License-Identifier: MIT
# --trace FILE writes the push as Chrome trace events: valid JSON, one
# process per host and one for the sender, every block received exactly
# once by every host and sent once for each receive, spans that do not
# run backwards, the set-up and commit of every host, and a label of how
# each member's clock was put on the sender's.  A trace file
# that cannot be written is refused before anything is sent.
. "$(dirname "$0")/../lib.sh"
start_daemons 4
src=$WORK/src
mkdir -p "$src"
prepare_dirs 4 "$src"
make_file "$src/data" $((3 << 20))
trace=$WORK/trace.json

expect_status 0 "$RDMCP" -b 256K --trace "$trace" "$src/data" "$(hosts 4)"
assert_copies 4 "$src/data"
jq -e . "$trace" >/dev/null || fail "not JSON: $(head -c 300 "$trace")"
k=12	# 3 MiB in 256 KiB blocks

# count FILTER: how many trace events FILTER selects
count() {
	jq "[.traceEvents[] | select($1)] | length" "$trace"
}

[ "$(jq '[.traceEvents[].pid] | unique | length' "$trace")" = 5 ] ||
	fail "processes: $(jq -c '[.traceEvents[].pid] | unique' "$trace")"
for pid in 1 2 3 4; do
	[ "$(jq -r ".traceEvents[] | select(.pid == $pid and .name == \"process_name\") | .args.name" "$trace")" = \
		"$(host_addr "$pid"):$PORT (rank $pid)" ] || fail "host $pid is not named"
	got=$(jq -c "[.traceEvents[] | select(.pid == $pid and .ph == \"X\" and
		(.name | startswith(\"recv \"))) | .args.block] | sort" "$trace")
	[ "$got" = "$(jq -nc "[range($k)]")" ] || fail "host $pid received $got"
	[[ $(jq -r ".traceEvents[] | select(.pid == $pid and .name == \"process_labels\") | .args.labels" "$trace") =~ \
		^times\ moved\ [-+][0-9]+\.[0-9]{3}\ ms\ \(±\ [0-9]+\.[0-9]{3}\ ms\)$ ]] ||
		fail "host $pid: no label of its clock"
	for span in bootstrap setup commit; do
		[ "$(count ".pid == $pid and .name == \"$span\"")" = 1 ] ||
			fail "host $pid: no $span span"
	done
done
sends=$(count '.ph == "X" and (.name | startswith("send "))')
[ "$sends" = $((4 * k)) ] || fail "$sends sends for $((4 * k)) receives"
[ "$(count '.ph == "X" and (.ts < 0 or .dur < 0)')" = 0 ] ||
	fail "spans before the start or running backwards"
[ "$(count '.pid == 0 and (.name | startswith("recv "))')" = 0 ] ||
	fail "the sender received blocks"
note "trace: 5 processes, $k blocks received once by each of 4 hosts, $sends sends"

# an unwritable trace file: refused first, nothing sent
expect_status 3 "$RDMCP" --trace "$WORK/no/such/dir/t.json" "$src/data" "$(hosts 4)"
grep -q "t.json" "$WORK/err" || fail "no word of the trace file: $(cat "$WORK/err")"
assert_no_temporaries
note "an unwritable trace file: exit 3 before anything is sent"

# again: every host holds the file already; the push ends at once, with
# no wait for timelines of jobs that had nothing to do
start=$(date +%s%N)
expect_status 0 "$RDMCP" --trace "$trace" "$src/data" "$(hosts 4)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
jq -e . "$trace" >/dev/null || fail "not JSON: $(head -c 300 "$trace")"
[ "$ms" -lt 2500 ] || fail "identical copies: took $ms ms (waiting for timelines?)"
note "identical copies with --trace: $ms ms"
