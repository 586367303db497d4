#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/delta_host.sh - a delta on one host, which has the machine's
# cores to itself, as every host of a real cluster has its own (what
# 'make bench-delta-host' runs; no root: a loopback daemon).
#
# A daemon holds a copy of a MIB MiB file; in RUNS rounds 1 % of its
# 1 MiB blocks change at scattered offsets and `rdmcp -b 1M --force`
# sends the change.  Prints each round's wall time, the bytes sent, and
# the time `xxhsum -H2` (XXH3-128, rdmcp's block digest; sha256sum
# without it) takes to read and digest the copy (the digest the issue's
# goal allows: a delta at 5 % of a full push plus that).
# With BENCH_B set to another build, a second daemon of that build holds
# its own copy and each round pushes the same change with both builds,
# in alternating order, and prints their ratio (B / A): a before/after
# in one run.  Every copy is compared with the source after every push.
#
# Settings (environment): BENCH_HOST_MIB (1024), BENCH_RUNS (5),
# BENCH_A (this tree's rdmcp), BENCH_B (none).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
export BENCH_A=${BENCH_A:-$TOP/rdmcp} BENCH_B=${BENCH_B:-}
export MIB=${BENCH_HOST_MIB:-1024} RUNS=${BENCH_RUNS:-5}
TEST_NAME=bench-delta-host TMPDIR=${TMPDIR:-/dev/shm} bash -c '
. "$0/tests/lib.sh"
n=1
RDMCP=$BENCH_A start_daemon 1
if [ -n "$BENCH_B" ]; then
	n=2
	RDMCP=$BENCH_B start_daemon 2
fi
for h in $(seq 1 $n); do
	wait_listening "$(host_addr "$h")" || fail "daemon $h did not start"
done
src=$WORK/src
mkdir -p "$src"
prepare_dirs "$n" "$src"
make_file "$src/data" $((MIB << 20))
bin() { [ "$1" = 1 ] && echo "$BENCH_A" || echo "$BENCH_B"; }
for h in $(seq 1 $n); do
	"$(bin "$h")" -q -b 1M "$src/data" "$(host_addr "$h"):$PORT" ||
		fail "first push to host $h"
done
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
echo "# $MIB MiB, 1 % of its blocks changed per round; load $(cut -d" " -f1-3 /proc/loadavg)"
for r in $(seq 1 "$RUNS"); do
	for k in $(seq 0 $((MIB / 100))); do
		printf "r%s" "$r" | dd of="$src/data" bs=1 conv=notrunc status=none \
			seek=$(( ((k * 97 + r) % MIB) * 1048576 + 17 ))
	done
	order="1 2"
	[ $((r % 2)) = 1 ] || order="2 1"
	line="round $r:"
	declare -A t=()
	for h in $order; do
		[ "$h" -le "$n" ] || continue
		s=$(date +%s%N)
		"$(bin "$h")" --json -b 1M --force "$src/data" \
			"$(host_addr "$h"):$PORT" >"$WORK/out$h" || fail "round $r, host $h"
		t[$h]=$(ms "$s")
		cmp -s "$src/data" "$WORK/h$h$src/data" || fail "round $r: host $h differs"
		sent=$(jq -r "select(.event == \"summary\") | .sent" "$WORK/out$h")
		line="$line $([ "$h" = 1 ] && echo A || echo B) ${t[$h]} ms (sent $sent)"
	done
	s=$(date +%s%N)
	if command -v xxhsum >/dev/null; then	# rdmcp digests with XXH3-128
		xxhsum -H2 "$WORK/h1$src/data" >/dev/null
		line="$line; XXH128 of the copy $(ms "$s") ms"
	else
		sha256sum "$WORK/h1$src/data" >/dev/null
		line="$line; SHA-256 of the copy (no xxhsum) $(ms "$s") ms"
	fi
	[ "$n" = 1 ] || line="$line; B / A $(awk -v a="${t[1]}" -v b="${t[2]}" "BEGIN { printf \"%.3f\", b / a }")"
	echo "$line; load $(cut -d" " -f1 /proc/loadavg)"
done
' "$TOP"
