# SPDX-License-Identifier: MIT
# Six hosts on an emulated network, every NIC shaped to 1 Gbit/s both ways:
# each algorithm delivers identical copies with --verify, and the report
# names every host.
. "$(dirname "$0")/../lib.sh"
need_root
cluster_up 6 1gbit
cluster_daemons 6
src=$WORK/src
mkdir -p "$src"
for i in $(seq 2 6); do mkdir -p "$WORK/h$i$src"; done
head -c $((24 << 20)) /dev/urandom >"$src/data"
chmod 750 "$src/data"
for alg in binomial chain tree sequential; do
	rm -f "$WORK"/h*"$src"/data
	expect_status 0 on_host 1 "$RDMCP" -v --verify -a "$alg" -b 256K \
		"$src/data" "$(cluster_hosts 6)"
	for i in $(seq 2 6); do
		cmp -s "$src/data" "$WORK/h$i$src/data" || fail "$alg: host $i"
		[ "$(stat -c %a "$WORK/h$i$src/data")" = 750 ] || fail "mode"
		grep -q "^$(cluster_addr "$i"):$PORT *ok" "$WORK/out" ||
			fail "$alg: no line for host $i"
	done
	note "$alg: $(tail -1 "$WORK/out")"
done
