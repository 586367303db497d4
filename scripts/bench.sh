#!/usr/bin/env bash
# bench.sh - rdmcp on an emulated cluster, against the physical limit.
#
# For each group size N, builds N network-namespace hosts whose NICs are
# shaped to RATE in both directions (scripts/netns-cluster.sh), starts
# daemons on hosts 2..N and measures, in the same run:
#   - unicast: one plain TCP copy of the file from host 1 to host 2
#     (tests/helpers/tcpcopy: sendfile, no rdmcp) - the physical limit;
#   - rdmcp 1 -> 1: the same copy with rdmcp (its fixed costs);
#   - rdmcp to hosts 2..N with each algorithm, with BENCH_BLOCK blocks:
#     time to the last replica;
#   - the binomial pipeline again with the default block size (1 MiB);
# and prints medians of RUNS runs and their ratio to the unicast.
#
# Why two block sizes: over TCP, 128 KiB blocks keep the pipeline close to
# the link rate, 1 MiB blocks (the papers' size, our default until block
# sizes are chosen automatically) lose more to per-block jitter and
# sharing as the group grows.  README, Performance, has the numbers.
#
# Settings (environment): BENCH_SIZES ("4 8 16"), BENCH_RATE (200mbit),
# BENCH_MIB (128), BENCH_RUNS (3), BENCH_ALGS ("binomial chain tree
# sequential"), BENCH_BLOCK (128K), BENCH_OPTS (extra rdmcp options).
# Needs root.
set -euo pipefail

SIZES=${BENCH_SIZES:-4 8 16}
RATE=${BENCH_RATE:-200mbit}
MIB=${BENCH_MIB:-128}
RUNS=${BENCH_RUNS:-3}
ALGS=${BENCH_ALGS:-binomial chain tree sequential}
BLOCK=${BENCH_BLOCK:-128K}
OPTS=${BENCH_OPTS:-}
export RDMCP_NS=${RDMCP_NS:-rdmcpbench}
DATA=/dev/shm/rdmcp-bench.$$
. "$(dirname "$0")/bench-lib.bash"
TCPCOPY=$TOP/build/tests/tcpcopy
[ -x "$TCPCOPY" ] || { echo "bench.sh: run 'make bench'" >&2; exit 2; }

clear_copies() {
	rm -rf "$DATA"/h*/"$DATA"
	local i
	for i in $(seq 2 "$1"); do
		mkdir -p "$DATA/h$i/$DATA"
	done
}

unicast_once() {
	"$CLUSTER" exec 2 "$TCPCOPY" recv 9999 "$DATA/h2/unicast" &
	local pid=$! t
	sleep 0.3
	t=$("$CLUSTER" exec 1 "$TCPCOPY" send "$("$CLUSTER" addr 2)" 9999 "$DATA/file")
	wait "$pid"
	rm -f "$DATA/h2/unicast"
	echo "$t"
}

# rdmcp_once N HOSTS ALG [options]: seconds to the last replica
rdmcp_once() {
	local out n=$1 hosts=$2 alg=$3
	shift 3
	clear_copies "$n"
	# shellcheck disable=SC2086
	out=$("$CLUSTER" exec 1 "$RDMCP" -a "$alg" "$@" $OPTS "$DATA/file" "$hosts") ||
		{ echo "bench.sh: rdmcp failed: $out" >&2; exit 1; }
	seconds_of "$out"
}

head -c "$((MIB << 20))" /dev/urandom >"$DATA/file"
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fs %.3fx", a, a / b }'
}

echo "rdmcp bench: ${MIB} MiB file, every NIC at $RATE both ways, $RUNS runs, medians"
echo "algorithms with $BLOCK blocks; last column: binomial with the default 1 MiB"
printf '%-4s %-10s %-16s' N unicast "rdmcp 1->1"
for alg in $ALGS; do printf ' %-18s' "$alg"; done
printf ' %-18s\n' "binomial 1M"
for n in $SIZES; do
	"$CLUSTER" up "$n" "$RATE"
	start_daemons "$n"
	uni=$(for r in $(seq "$RUNS"); do unicast_once; done | median)
	one=$(for r in $(seq "$RUNS"); do rdmcp_once 2 "$("$CLUSTER" addr 2)" binomial -b "$BLOCK"; done | median)
	printf '%-4s %-10s %-16s' "$n" "${uni}s" "$(ratio "$one" "$uni")"
	for alg in $ALGS; do
		t=$(for r in $(seq "$RUNS"); do rdmcp_once "$n" "$(hostlist "$n")" "$alg" -b "$BLOCK"; done | median)
		printf ' %-18s' "$(ratio "$t" "$uni")"
	done
	t=$(for r in $(seq "$RUNS"); do rdmcp_once "$n" "$(hostlist "$n")" binomial; done | median)
	printf ' %-18s\n' "$(ratio "$t" "$uni")"
	"$CLUSTER" down
done
