# SPDX-License-Identifier: MIT
# Small untruths of the report found by an edge-case run (issue 39, item
# 0), each checked against what the hosts hold:
#   - a repeated -x keeps every list out, not only the last one;
#   - --name . is refused: standard input is named after no directory;
#   - --plan --racks shows the chain a --topology push uses;
#   - a push that sent nothing (all already identical) shows no rate;
#   - a --trace that cannot be written does not change the push's exit
#     status, and leaves no half (invalid) trace;
#   - a --bind of the wrong family is named, and not retried;
#   - a busy host (--max-jobs) is sent to again a second later, not 2 ms.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$WORK/stage"
make_file "$src/data" 100000

# assert_staged N: hosts 1..N hold $src/data in $WORK/stage, byte for byte
assert_staged() {
	local i
	for i in $(seq 1 "$1"); do
		cmp -s "$src/data" "$(landed "$i" "$WORK/stage/data")" ||
			fail "host $i does not hold the data in the stage"
	done
}

# -x twice: hosts 2 and 3 are both left out (the last -x alone left host
# 2 in, and wrote to it)
expect_status 0 "$RDMCP" -v -x "$(host_addr 2):$PORT" -x "$(host_addr 3):$PORT" \
	-d "$WORK/stage" "$src/data" "$(hosts 3)"
[ -f "$(landed 1 "$WORK/stage/data")" ] || fail "host 1 has no copy"
for i in 2 3; do
	[ ! -e "$(landed "$i" "$WORK/stage/data")" ] ||
		fail "-x -x: host $i was written to: $(cat "$WORK/out")"
done
grep -q "^1 of 1 replicas complete" "$WORK/out" || fail "$(cat "$WORK/out")"

# --name . is not a file name: it named standard input after the current
# directory; now a usage error before anything is sent
(cd "$src" && echo data | expect_status 2 "$RDMCP" --name . -d "$WORK/stage/" - "$(hosts 1)")
grep -q "names a directory, not the file standard input lands as" "$WORK/err" ||
	fail "--name .: $(cat "$WORK/err")"
[ ! -e "$(landed 1 "$WORK/stage/src")" ] || fail "--name .: landed as the directory's name"

# --plan --racks shows the schedule a --topology push uses: the chain
# unless -a says otherwise (it showed the binomial pipeline)
"$RDMCP" --plan --racks 3,4 --blocks 16 >"$WORK/plan" || fail "--plan --racks"
grep -q "^# steps [0-9]* hosts 7 blocks 16 algorithm chain racks 3,4$" "$WORK/plan" ||
	fail "--plan --racks: $(tail -1 "$WORK/plan")"

# a push in which every host was already identical sent nothing: no rate
# (it showed one, from the time the hosts took to say so)
expect_status 0 "$RDMCP" --json -d "$WORK/stage" "$src/data" "$(hosts 1)"
jq -e 'select(.event == "summary") | .throughput == 0 and .sent == 0' \
	"$WORK/out" >/dev/null || fail "identical, JSON: $(tail -1 "$WORK/out")"
expect_status 0 "$RDMCP" -d "$WORK/stage" "$src/data" "$(hosts 1)"
grep -q "^1 of 1 replicas complete: already identical, nothing sent$" "$WORK/out" ||
	fail "identical: $(cat "$WORK/out")"

# a --trace that cannot be written is the trace's failure, not the
# push's: the copies landed, the exit status is 0, and the message says
# both (it turned a complete push into exit 3)
rm -f "$WORK"/h*"$WORK/stage/data"
expect_status 0 "$RDMCP" --trace /dev/full -d "$WORK/stage" "$src/data" "$(hosts 2)"
grep -q "^rdmcp: --trace: cannot write /dev/full: No space left on device (left as it is); the push's outcome is reported as it went$" \
	"$WORK/err" || fail "--trace /dev/full: $(cat "$WORK/err")"
grep -q "^2 of 2 replicas complete" "$WORK/out" || fail "$(cat "$WORK/out")"
assert_staged 2
# out of space in a regular file: no half trace (invalid JSON) is left
if [ "$(id -u)" -eq 0 ] && mkdir -p "$WORK/tiny" &&
	mount -t tmpfs -o size=4k tmpfs "$WORK/tiny" 2>/dev/null; then
	on_exit "umount $WORK/tiny"
	rm -f "$WORK"/h*"$WORK/stage/data"
	expect_status 0 "$RDMCP" --trace "$WORK/tiny/t.json" -b 4K \
		-d "$WORK/stage" "$src/data" "$(hosts 3)"
	grep -q "cannot write $WORK/tiny/t.json: No space left on device (removed, as no valid trace)" \
		"$WORK/err" || fail "--trace on a full disk: $(cat "$WORK/err")"
	[ ! -e "$WORK/tiny/t.json" ] || fail "a partial trace was left: $(tail -c 100 "$WORK/tiny/t.json")"
	assert_staged 3
else
	note "not root: the full regular file is not tried"
fi

# a --bind of the other family cannot reach a host, now or later: the
# message names --bind and the host is not retried (it was: "invalid
# argument", twice)
expect_status 1 "$RDMCP" -v --bind ::1 -d "$WORK/stage" "$src/data" "$(hosts 1)"
grep -q "FAILED .*cannot reach $(host_addr 1):$PORT (IPv4) from --bind ::1 (IPv6): give --bind an address of its family, or none" \
	"$WORK/out" || fail "--bind: $(cat "$WORK/out" "$WORK/err")"
! grep -q "retrying" "$WORK/err" || fail "--bind mismatch retried: $(cat "$WORK/err")"

# a host busy with other transfers (--max-jobs) is sent to again after a
# second, not a few milliseconds later, and the retry line says why
start_daemon 4 --max-jobs 1
wait_listening "$(host_addr 4)" || fail "daemon 4 did not start"
prepare_dirs 4 "$WORK/stage"
make_file "$src/slow" $((3 << 20))
"$RDMCP" --bwlimit 1M -d "$WORK/stage" "$src/slow" "$(host_addr 4):$PORT" \
	>"$WORK/outA" 2>&1 &
pidA=$!
wait_event "rank 1 of 2" "$WORK/daemon4.log" 10 "the long transfer's start on host 4"
expect_status 1 "$RDMCP" --retries 1 -d "$WORK/stage" "$src/data" "$(host_addr 4):$PORT"
grep -q "retrying 1 host that failed (attempt 2: retry 1 of at most 1; in 1 s: 1 was busy)" \
	"$WORK/err" || fail "busy retry: $(cat "$WORK/err")"
# (the log's ISO 8601 stamps: seconds of the day, from hh:mm:ss.frac)
apart=$(grep "refused a job from .*: busy" "$WORK/daemon4.log" |
	awk '{ split($2, d, "T"); split(d[2], c, /[:+]/)
	       t[NR] = c[1] * 3600 + c[2] * 60 + c[3] }
	     END { if (NR == 2 && t[2] < t[1]) t[2] += 86400	# midnight
		   print (NR == 2) ? t[2] - t[1] : -1 }')
awk -v a="$apart" 'BEGIN { exit !(a >= 0.9) }' ||
	fail "the busy host was sent to again $apart s later: $(grep busy "$WORK/daemon4.log")"
wait "$pidA" || fail "the long transfer failed: $(cat "$WORK/outA")"
[ ! -e "$(landed 4 "$WORK/stage/data")" ] || fail "host 4 holds what it refused"
