# SPDX-License-Identifier: MIT
# Keepalives: connections that are idle but healthy outlive a short
# --timeout (a sequential receiver waits for its turn); a frozen daemon
# (SIGSTOP) is found out by it, and the transfer ends instead of hanging;
# a member's data connection that comes before its START keeps answering
# at the job's timeout.
. "$(dirname "$0")/../lib.sh"
start_daemons 5
src=$WORK/src
mkdir -p "$src"
prepare_dirs 5 "$src"
make_file "$src/data" $((250 << 20))
# host 5 waits for four full copies before its first block: several
# timeouts long
start=$(date +%s%N)
expect_status 0 "$RDMCP" -t 0.3 -a sequential "$src/data" "$(hosts 5)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
note "sequential to 5 hosts took $ms ms with a 300 ms timeout"
[ "$ms" -gt 900 ] || note "(too fast to prove much on this machine)"
assert_copies 5 "$src/data"
# a frozen daemon: detected by the timeout
rm -f "$WORK"/h*"$src"/data
kill -STOP "${DAEMON_PIDS[3]}"
start=$(date +%s%N)
expect_status 1 "$RDMCP" -v -t 1 -a chain "$src/data" "$(hosts 5)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill -CONT "${DAEMON_PIDS[3]}"
note "frozen host detected, transfer ended after $ms ms (timeout 1 s, 2 s for the retry)"
# found out by the timeout given (-t 1), and named so: a bound on the
# time it took would fail on a loaded machine, not on a wrong timeout
grep -q "127.0.0.4:$PORT failed (the daemon at 127.0.0.4:$PORT said nothing for 1000 ms (--timeout)" "$WORK/err" ||
	fail "frozen host: $(cat "$WORK/err")"
grep -q "127.0.0.4:$PORT *FAILED" "$WORK/out" || fail "$(cat "$WORK/out")"
for i in 1 2 3 4 5; do
	f=$(landed "$i" "$src/data")
	[ ! -e "$f" ] || cmp -s "$f" "$src/data" || fail "partial file on host $i"
done
# a member's data connection that comes before START (a thousand members
# get theirs one after another) waits, parked, and must keep answering
# at the job's timeout (300 ms here), not at the daemon's own (30 s): the
# member at the other end takes 300 ms of silence for death
prepare_dirs 1 /rawclient
out=$("$TOP/build/tests/rawclient" "$(host_addr 1)" "$PORT" parked "$RDMCP_KEY")
note "a data connection parked for 1.5 s: $out"
n=$(echo "$out" | sed -n 's/^parked: \([0-9]*\) keepalives, open$/\1/p')
[ -n "$n" ] && [ "$n" -ge 5 ] || fail "parked connection: $out"
wait_event "job [0-9a-f]*: the sender went away" "$WORK/daemon1.log" 10 \
	"daemon 1 discarding the job the raw sender left"
assert_no_temporaries
