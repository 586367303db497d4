# SPDX-License-Identifier: MIT
# --retries: a relay killed mid-transfer in a 16-host binomial pipeline;
# the sender forms a new group from the hosts that lack a copy and sends
# again, so every surviving host ends with a complete copy, and only the
# dead one is reported failed.
. "$(dirname "$0")/../lib.sh"
need_root
N=16
cluster_up $N 200mbit
cluster_daemons $N
src=$WORK/src
mkdir -p "$src"
for i in $(seq 2 $N); do mkdir -p "$WORK/h$i$src"; done
head -c $((24 << 20)) /dev/urandom >"$src/data"
on_host 1 timeout 120 "$RDMCP" -v --retries 1 -b 256K --failed-file "$WORK/failed" \
	"$src/data" "$(cluster_hosts $N)" >"$WORK/out" 2>"$WORK/err" &
pid=$!
# rank 1 (host 2) relays from the first step on: kill it once blocks
# reach it
wait_event "rank 1 of" "$WORK/daemon2.log" 10 "host 2 joining the group"
wait_blocks "$WORK/h2" 10
kill_daemon 2
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 1 ] || fail "exit $rc: $(cat "$WORK/out" "$WORK/err")"
grep -q "retrying .* (attempt 2: retry 1 of at most 1; .* only lost their group" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
[ "$(host_lines ok "$WORK/out")" -eq $((N - 2)) ] ||
	fail "not every survivor has a copy: $(cat "$WORK/out")"
[ "$(host_lines FAILED "$WORK/out")" -eq 1 ] || fail "$(cat "$WORK/out")"
grep -q "$(cluster_addr 2):$PORT *FAILED" "$WORK/out" || fail "$(cat "$WORK/out")"
[ "$(cat "$WORK/failed")" = "$(cluster_addr 2):$PORT" ] ||
	fail "failed file: $(cat "$WORK/failed")"
for i in $(seq 3 $N); do
	cmp -s "$src/data" "$WORK/h$i$src/data" || fail "host $i: no good copy"
done
[ ! -e "$WORK/h2$src/data" ] || fail "the dead host has a final file"
note "$(tail -1 "$WORK/out")"
