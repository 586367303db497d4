# Keepalives: connections that are idle but healthy outlive a short
# --timeout (a sequential receiver waits for its turn); a frozen daemon
# (SIGSTOP) is found out by it, and the transfer ends instead of hanging.
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
# a frozen daemon: detected within about the timeout
rm -f "$WORK"/h*"$src"/data
kill -STOP "${DAEMON_PIDS[3]}"
start=$(date +%s%N)
expect_status 1 "$RDMCP" -v -t 1 -a chain "$src/data" "$(hosts 5)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
kill -CONT "${DAEMON_PIDS[3]}"
note "frozen host detected, transfer ended after $ms ms (timeout 1 s)"
[ "$ms" -lt 8000 ] || fail "took $ms ms to give up on a frozen host"
grep -q "127.0.0.4:$PORT *FAILED" "$WORK/out" || fail "$(cat "$WORK/out")"
for i in 1 2 3 4 5; do
	f=$(landed "$i" "$src/data")
	[ ! -e "$f" ] || cmp -s "$f" "$src/data" || fail "partial file on host $i"
done
