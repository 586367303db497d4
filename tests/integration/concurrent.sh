# SPDX-License-Identifier: MIT
# One daemon serves several transfers at the same time, from different
# senders, and keeps serving afterwards.
. "$(dirname "$0")/../lib.sh"
start_daemons 5
src=$WORK/src
mkdir -p "$src"
prepare_dirs 5 "$src"
pids=()
for j in 1 2 3 4; do
	make_file "$src/f$j" $(( (j * 3) << 20 ))
	"$RDMCP" -b 256K -a "$(echo binomial chain tree sequential | cut -d' ' -f$j)" \
		"$src/f$j" "$(hosts 5)" >"$WORK/out$j" 2>&1 &
	pids+=($!)
done
for j in 1 2 3 4; do
	wait "${pids[$((j - 1))]}" || fail "transfer $j: $(cat "$WORK/out$j")"
	assert_copies 5 "$src/f$j"
done
expect_status 0 "$RDMCP" --force "$src/f1" "$(hosts 5)"
assert_no_temporaries

# --max-jobs: a transfer beyond the cap is refused as busy, before
# anything is made, and may be sent again (not a permanent refusal); the
# one running is not disturbed.  A is kept running by its --bwlimit.
start_daemon 6 --max-jobs 1
wait_listening "$(host_addr 6)" || fail "daemon 6 did not start"
prepare_dirs 6 "$src"
make_file "$src/slow" 3145728
"$RDMCP" --bwlimit 1M "$src/slow" "$(host_addr 6):$PORT" >"$WORK/outA" 2>&1 &
pidA=$!
wait_event "rank 1 of 2" "$WORK/daemon6.log" 10 "the capped transfer's start on host 6"
expect_status 1 "$RDMCP" --retries 0 --json "$src/f1" "$(host_addr 6):$PORT"
jq -se '.[0] | .event == "replica" and (.ok | not) and
	(.reason | test("^busy: 1 transfer is running there \\(its --max-jobs\\); try again later$"))' \
	"$WORK/out" >/dev/null || fail "not refused as busy: $(cat "$WORK/out")"
[ ! -e "$(landed 6 "$src/f1")" ] || fail "the refused transfer left a file"
wait "$pidA" || fail "the running transfer failed: $(cat "$WORK/outA")"
cmp -s "$src/slow" "$(landed 6 "$src/slow")" || fail "host 6 holds no copy of the capped transfer"
expect_status 0 "$RDMCP" "$src/f1" "$(host_addr 6):$PORT"
cmp -s "$src/f1" "$(landed 6 "$src/f1")" || fail "host 6 holds no copy of f1"
grep -q "refused a job from .*: busy: 1 transfer is running there" "$WORK/daemon6.log" ||
	fail "the daemon did not log the refusal"
assert_no_temporaries

# A daemon running other transfers sends no block time (they share its
# link: --slow last must not judge a host by that), and does again when
# it runs one alone.  A is kept running by its --bwlimit while B comes.
start_daemon 7
wait_listening "$(host_addr 7)" || fail "daemon 7 did not start"
prepare_dirs 7 "$src"
"$RDMCP" --bwlimit 1M "$src/slow" "$(host_addr 7):$PORT" >"$WORK/outA" 2>&1 &
pidA=$!
wait_event "rank 1 of 2" "$WORK/daemon7.log" 10 "the long transfer's start on host 7"
expect_status 0 "$RDMCP" -b 64K --json "$src/f1" "$(host_addr 7):$PORT"
shared=$(jq -rs '.[0].link_rate' "$WORK/out")
kill -0 "$pidA" 2>/dev/null || fail "A ended before B did: B's link was not shared"
wait "$pidA" || fail "the long transfer failed: $(cat "$WORK/outA")"
[ "$shared" = 0 ] || fail "a block time while sharing the link: link_rate $shared"
rm "$(landed 7 "$src/f1")"	# else it holds it already: nothing is sent
expect_status 0 "$RDMCP" -b 64K --json "$src/f1" "$(host_addr 7):$PORT"
alone=$(jq -rs '.[0].link_rate' "$WORK/out")
[ "$alone" -gt 0 ] || fail "no block time when alone: link_rate $alone"
cmp -s "$src/f1" "$(landed 7 "$src/f1")" || fail "host 7 holds no copy of f1"
assert_no_temporaries
