# SPDX-License-Identifier: MIT
# Most of a group silent at once is taken for the sender's machine or
# network starving them (a loaded sender, a saturated switch), not for
# hosts that all hung: the retry takes none of them for a suspect, to be
# cut a short grace after the others are ready ("still silent"), but
# waits for each as long as -t and --connect-timeout allow (issue 37: a
# soak of 250 hosts lost 213 live ones that way).  Here 8 of 10 daemons
# frozen mid-push stay frozen: the retry says so, and fails them on
# their own handshakes, not as suspects; the 2 others end ok, and the
# report is their disks.
. "$(dirname "$0")/../lib.sh"
start_daemons 10
src=$WORK/src
# 16 MiB at 2 MiB/s: 8 s to see a block land on host 3 before the freeze,
# wide enough for a machine loaded by a parallel make check
make_file "$src" $((16 << 20))
prepare_dirs 10 "$WORK/stage"

"$RDMCP" -v --retries 1 -t 1 --connect-timeout 3 --bwlimit 2M \
	-d "$WORK/stage" "$src" "$(hosts 10)" >"$WORK/out" 2>"$WORK/err" &
sender=$!
on_exit "kill -KILL $sender"
wait_receiving 3 "$WORK/stage"
for i in $(seq 3 10); do freeze_daemon "$i"; done
wait_exit "$sender" 40
[ "$RC" -eq 1 ] || fail "exit $RC: $(cat "$WORK/out" "$WORK/err")"
grep -q "^rdmcp: 8 of 10 hosts went silent at once" "$WORK/err" ||
	fail "no word of the mass silence: $(cat "$WORK/err")"
[ "$(grep -c "retrying" "$WORK/err")" -eq 1 ] ||
	fail "not one retry: $(grep retrying "$WORK/err")"
! grep -q "still silent" "$WORK/out" ||
	fail "frozen hosts cut as suspects: $(grep "still silent" "$WORK/out")"
for i in $(seq 3 10); do
	grep -q "^$(host_addr "$i"):$PORT *FAILED .*the daemon at .* \(said nothing\|did not prove\)" \
		"$WORK/out" || fail "host $i's report: $(cat "$WORK/out")"
done
assert_ok_copies "$src" "$WORK/stage/src" 1 2
for i in $(seq 3 10); do
	[ ! -e "$(landed "$i" "$WORK/stage/src")" ] || fail "host $i holds the file"
done
note "$(grep "went silent at once" "$WORK/err" | cut -c1-120)"
note "$(grep "^$(host_addr 3):$PORT *FAILED" "$WORK/out" | cut -c1-160)"
for i in $(seq 3 10); do
	kill -CONT "${DAEMON_PIDS[$i]}"
done
for i in $(seq 3 10); do wait_job_ended "$i"; done
assert_no_temporaries
