# SPDX-License-Identifier: MIT
# A relay that got its own copy but cannot reach the next host (its
# packets to it vanish): it reports the failure after it reported success,
# and the sender must abort the group on it, naming the relay, instead of
# waiting for ever for the hosts downstream (a hang once seen in CI).
. "$(dirname "$0")/../lib.sh"
need_root
cluster_up 5
cluster_daemons 5 --connect-timeout 1
src=$WORK/src
mkdir -p "$src"
for i in $(seq 2 5); do mkdir -p "$WORK/h$i$src"; done
head -c 1000 /dev/urandom >"$src/small"
# chain: host 2 -> 3 -> 4 -> 5; host 3 (rank 2) loses everything to host 4
# (routed to its own loopback, where they are dropped as not its own)
on_host 3 ip route add "$(cluster_addr 4)/32" dev lo
start=$(date +%s%N)
# one group (a second attempt, without host 3, would succeed)
expect_status 1 on_host 1 "$RDMCP" -v --retries 0 -a chain "$src/small" \
	"$(cluster_hosts 5)"
ms=$(( ($(date +%s%N) - start) / 1000000 ))
note "sender exited 1 after $ms ms"
[ "$ms" -lt 10000 ] || fail "took $ms ms to give up"
for i in 2 3; do
	grep -q "$(cluster_addr "$i"):$PORT *ok" "$WORK/out" ||
		fail "host $i should hold its copy: $(cat "$WORK/out")"
	cmp -s "$src/small" "$WORK/h$i$src/small" || fail "host $i: bad copy"
done
for i in 4 5; do
	grep -q "$(cluster_addr "$i"):$PORT *FAILED.*$(cluster_addr 3):$PORT could not relay" \
		"$WORK/out" || fail "host $i: $(cat "$WORK/out")"
	[ ! -e "$WORK/h$i$src/small" ] || fail "host $i has the file"
done
# with the default --retries 1, the hosts that lacked a copy get it from a
# second group that no longer depends on host 3's broken path
for i in 2 3 4 5; do rm -f "$WORK/h$i$src/small"; done
expect_status 0 on_host 1 "$RDMCP" -a chain "$src/small" "$(cluster_hosts 5)"
grep -q "retrying 2 hosts" "$WORK/err" || fail "$(cat "$WORK/err")"
for i in 2 3 4 5; do
	cmp -s "$src/small" "$WORK/h$i$src/small" || fail "host $i: no copy"
done
