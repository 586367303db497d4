#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/tree.sh - a tree of many small files against one file of the same
# total size, on an emulated cluster (scripts/netns-cluster.sh).
#
# A tree is one transfer: one list of entries, one stream of blocks, so
# 10,000 small files should cost about what one file of the same size
# does (target: within 1.5x).  Measures, in the same run, the time to the
# last replica of `rdmcp -r TREE` and of `rdmcp FILE` to hosts 2..N, both
# with the default block size, and prints medians of RUNS runs and their
# ratio; once with every NIC shaped to RATE, once unshaped (the per-file
# costs alone, the network being memory speed).
#
# Settings (environment): BENCH_FILES (10000), BENCH_MIB (128), BENCH_N
# (8), BENCH_RATE (200mbit), BENCH_RUNS (3).  Needs root.
set -euo pipefail

FILES=${BENCH_FILES:-10000}
MIB=${BENCH_MIB:-128}
N=${BENCH_N:-8}
RATE=${BENCH_RATE:-200mbit}
RUNS=${BENCH_RUNS:-3}
export RDMCP_NS=${RDMCP_NS:-rdmcptree}
DATA=/dev/shm/rdmcp-bench-tree.$$
. "$(dirname "$0")/lib.bash"
mkdir -p "$DATA/src"

# make_tree: FILES files of equal size in directories of 100, and one
# file of the same total size.
make_tree() {
	local each=$(((MIB << 20) / FILES)) d f
	head -c "$((each * FILES))" /dev/urandom >"$DATA/src/file"
	for d in $(seq 0 $(((FILES - 1) / 100))); do
		mkdir -p "$DATA/src/tree/d$d"
	done
	# cut the one file into the many, so both hold the same bytes
	(cd "$DATA/src/tree" && split -a 5 -d -b "$each" "$DATA/src/file" part.)
	for f in "$DATA/src/tree"/part.*; do
		d=$((10#${f##*.} / 100))
		mv "$f" "$DATA/src/tree/d$d/"
	done
}

clear_copies() {
	local i
	for i in $(seq 2 "$N"); do
		rm -rf "$DATA/h$i"
		mkdir -p "$DATA/h$i/$DATA/src"
	done
}

# once ARGS...: seconds to the last replica
once() {
	local out
	clear_copies
	out=$("$CLUSTER" exec 1 "$RDMCP" "$@" "$(hostlist "$N")") ||
		{ echo "bench/tree.sh: rdmcp failed: $out" >&2; exit 1; }
	seconds_of "$out"
}

measure() {
	local rate=$1 one tree
	"$CLUSTER" up "$N" $rate
	start_daemons "$N"
	one=$(for r in $(seq "$RUNS"); do once "$DATA/src/file"; done | median)
	tree=$(for r in $(seq "$RUNS"); do once -r "$DATA/src/tree"; done | median)
	awk -v r="${rate:-unshaped}" -v a="$one" -v b="$tree" 'BEGIN {
		printf "%-10s one file %.2fs  tree %.2fs  ratio %.3fx\n", r, a, b, b / a }'
	"$CLUSTER" down
}

make_tree
echo "rdmcp bench-tree: $FILES files ($(du -sh --apparent-size "$DATA/src/tree" | cut -f1)) vs one file of $MIB MiB, $N hosts, $RUNS runs, medians"
measure "$RATE"
measure ""
