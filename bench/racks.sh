#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/racks.sh - racks behind oversubscribed uplinks ('make bench-racks';
# root: network namespaces).
#
# For each scenario R:H:RATE:UPLINK:MIB it builds R racks of H hosts
# (scripts/netns-cluster.sh: every NIC at RATE both ways, each rack's
# bridge joined to the core by an uplink at UPLINK each way), pushes MIB
# MiB from host 1 (rack 1) to all the others, and prints per push type the
# median time to the last replica over the time of one copy at RATE, and
# the bytes that crossed the uplinks into racks, in copies of the file
# (the most any one rack's uplink carried in, and all racks together):
#   default     rdmcp, hosts listed rack by rack (binomial pipeline)
#   chain       rdmcp -a chain, hosts listed rack by rack
#   topology    rdmcp --topology, hosts listed interleaved across racks
#   hybrid      rdmcp --topology -a binomial, the same list: a binomial
#               pipeline in each rack, fed from the rack before
#
#   BENCH_RACKS_SCENARIOS  default "2:8:200mbit:400mbit:64 4:8:200mbit:200mbit:64"
#                          (uplinks at a quarter, then an eighth, of a
#                          rack's NICs together)
#   BENCH_RUNS             pushes of each kind (default 3)
#   BENCH_OPTS             more rdmcp options for every push (e.g. -b 64K)
set -euo pipefail

SCENARIOS=${BENCH_RACKS_SCENARIOS:-2:8:200mbit:400mbit:64 4:8:200mbit:200mbit:64}
RUNS=${BENCH_RUNS:-3}
OPTS=${BENCH_OPTS:-}
DATA=/dev/shm/rdmcp-bench-racks.$$
export RDMCP_NS=rdmcpracks
. "$(dirname "$0")/lib.bash"

# uplinks: "MAXIN TOTAL" bytes into racks, from the uplinks' counters
uplinks() {
	"$CLUSTER" uplink-bytes | awk '{ t += $3; if ($3 > m) m = $3 }
		END { printf "%.0f %.0f\n", m, t }'
}

# interleaved R H: hosts 2..R*H taken round-robin across racks
interleaved() {
	local r=$1 h=$2 i k list=""
	for i in $(seq 0 $((h - 1))); do
		for k in $(seq 0 $((r - 1))); do
			[ $((k * h + i + 1)) -ge 2 ] || continue
			list="$list${list:+,}$("$CLUSTER" addr $((k * h + i + 1))):$PORT"
		done
	done
	echo "$list"
}

# one_push KIND LIST: seconds, max copies into a rack, total copies
one_push() {
	local kind=$1 list=$2 before after out secs opts=()
	read -r -a opts <<<"$OPTS"
	case $kind in
	chain) opts+=(-a chain) ;;
	topology) opts+=(--topology "$DATA/topo") ;;
	hybrid) opts+=(--topology "$DATA/topo" -a binomial) ;;
	esac
	rm -rf "$DATA"/h*/dst
	read -r -a before <<<"$(uplinks)"
	# the sender's host name is its address, as the topology lists it
	out=$(timeout -k 5 600 "$CLUSTER" exec 1 unshare --uts sh -c 'hostname "$0" && exec "$@"' \
		"$("$CLUSTER" addr 1)" "$RDMCP" -P "$PORT" "${opts[@]}" -d /dst/ \
		"$DATA/src/data.bin" "$list" 2>&1) ||
		{ echo "bench/racks.sh: $kind push failed: $out" >&2; return 1; }
	read -r -a after <<<"$(uplinks)"
	echo "$out" | grep "^rdmcp: slow:" | sed "s|^|bench/racks.sh: $kind: |" >&2 || true
	secs=$(seconds_of "$out")
	awk -v s="$secs" -v m=$((after[0] - before[0])) \
		-v t=$((after[1] - before[1])) -v f="$BYTES" \
		'BEGIN { printf "%s %.2f %.2f\n", s, m / f, t / f }'
}

scenario() {
	local r=$1 h=$2 rate=$3 uplink=$4 mib=$5 n k kind run ordered copy secs
	n=$((r * h))
	BYTES=$((mib << 20))
	"$CLUSTER" up "$n" "$rate" >/dev/null
	"$CLUSTER" racks "$r" "$uplink"
	mkdir -p "$DATA/src"
	head -c "$BYTES" /dev/urandom >"$DATA/src/data.bin"
	: >"$DATA/topo"
	for k in $(seq 1 "$r"); do
		echo "rack$k: $(seq $(((k - 1) * h + 1)) $((k * h)) |
			while read -r i; do "$CLUSTER" addr "$i"; done | paste -sd, -)" >>"$DATA/topo"
	done
	start_daemons "$n"
	ordered=$(hostlist "$n" | sed "s/\(,\|$\)/:$PORT\1/g")
	copy=$(awk -v b="$BYTES" -v r="$(bits_per_s "$rate")" 'BEGIN { print b * 8 / r }')
	echo "bench-racks: $r racks x $h hosts, NICs $rate, uplinks $uplink, $mib MiB; one copy at $rate: $copy s; $RUNS runs"
	for kind in default chain topology hybrid; do
		: >"$DATA/$kind"
		for run in $(seq 1 "$RUNS"); do
			if [ "$kind" = topology ] || [ "$kind" = hybrid ]; then
				one_push "$kind" "$(interleaved "$r" "$h")" >>"$DATA/$kind"
			else
				one_push "$kind" "$ordered" >>"$DATA/$kind"
			fi
		done
		secs=$(cut -d' ' -f1 "$DATA/$kind" | median)
		awk -v c="$copy" -v k="$kind" -v s="$secs" \
			-v m="$(cut -d' ' -f2 "$DATA/$kind" | median)" \
			-v t="$(cut -d' ' -f3 "$DATA/$kind" | median)" 'BEGIN {
			printf "  %-9s %.3f s = %.3f x one copy; into racks: at most %.2f copies per rack, %.2f in all\n",
				k, s, s / c, m, t }'
	done
	"$CLUSTER" down
}

for s in $SCENARIOS; do
	IFS=: read -r r h rate uplink mib <<<"$s"
	scenario "$r" "$h" "$rate" "$uplink" "$mib"
done
