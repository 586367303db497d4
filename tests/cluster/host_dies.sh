# SPDX-License-Identifier: MIT
# On an emulated 200 Mbit/s network, a relay's daemon is killed mid-
# transfer: the sender and the survivors learn it within seconds, the dead
# host is reported as such, and no host has a partial file under the final
# name.
. "$(dirname "$0")/../lib.sh"
need_root
cluster_up 8 200mbit
cluster_daemons 8
src=$WORK/src
mkdir -p "$src"
for i in $(seq 2 8); do mkdir -p "$WORK/h$i$src"; done
head -c $((48 << 20)) /dev/urandom >"$src/data"
# one group, no second attempt (--retries: tests/cluster/retry.sh)
on_host 1 timeout 120 "$RDMCP" -v --retries 0 "$src/data" "$(cluster_hosts 8)" >"$WORK/out" 2>&1 &
pid=$!
# rank 1 (host 2) relays in the binomial pipeline; kill it once blocks
# reach it
wait_event "rank 1 of" "$WORK/daemon2.log" 10 "host 2 joining the group"
wait_blocks "$WORK/h2" 10
kill_daemon 2
killed=$(date +%s%N)
rc=0
wait "$pid" || rc=$?
ms=$(( ($(date +%s%N) - killed) / 1000000 ))
note "sender exited $rc, $ms ms after the kill"
[ "$rc" -eq 1 ] || fail "exit $rc: $(cat "$WORK/out")"
[ "$ms" -lt 5000 ] || fail "took $ms ms to end"
grep -q "$(cluster_addr 2):$PORT *FAILED.*went away" "$WORK/out" ||
	fail "the dead host is not named: $(cat "$WORK/out")"
for i in $(seq 2 8); do
	f=$WORK/h$i$src/data
	[ ! -e "$f" ] || cmp -s "$f" "$src/data" || fail "partial file on host $i"
	[ "$i" -eq 2 ] && continue
	left=$(find "$WORK/h$i" -name '.*.rdmcp-*' | head -1)
	[ -z "$left" ] || fail "host $i left $left"
done
