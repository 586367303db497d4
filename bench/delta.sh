#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/delta.sh - what a push costs when the hosts hold some of it
# already (what 'make bench-delta' runs; root: network namespaces).
#
# For each scenario N:RATE:MIB, builds N hosts whose NICs run at RATE
# (scripts/netns-cluster.sh), daemons on hosts 2..N, a file of MIB MiB on
# host 1, and in RUNS rounds measures, each from the state the one before
# left:
#   full      a push to hosts that hold nothing (their copies removed)
#   delta     1 % of the file's blocks changed at scattered offsets, then
#             a push with --force: the changed blocks only
#   whole     the same change, pushed with --force -W: every block
#   grown     10 % appended, then --force
#   same      nothing changed: "already identical"
#   resume    copies removed, a push interrupted (SIGINT) at half the time
#             of `full`, then the same command: the second run's time
# Before delta, whole, grown and same the hosts' copies are written back
# (sync, not timed), as they would be when a new version is staged long
# after the last: on xfs a reflink of a file with dirty pages writes them
# back first.  Not before the resumed push: its first run has just ended.
# Prints medians: seconds to the last replica, and the bytes the sender
# sent over the file's size; and each one's time over `full`.  Every copy
# is compared with the source after every push; a mismatch stops the
# benchmark.  Blocks are 1M (-b 1M) so that 1 % of them is a handful.
#
# Settings (environment): BENCH_DELTA_SCENARIOS ("16:200mbit:256"; the
# hosts keep an old copy and a new one at once, in /dev/shm: 2 x N x MIB),
# BENCH_RUNS (3), BENCH_OPTS (extra options of every push), BENCH_PORT,
# BENCH_DELTA_FS: where the hosts' files are, tmpfs (the default: every
# copy of an old file into a new temporary copies its pages) or xfs (an
# image on /dev/shm, looped and formatted with reflinks: the copies share
# extents, as on a host whose disk is xfs or btrfs; needs xfsprogs).
set -euo pipefail

SCENARIOS=${BENCH_DELTA_SCENARIOS:-16:200mbit:256}
RUNS=${BENCH_RUNS:-3}
OPTS=${BENCH_OPTS:-}
FS=${BENCH_DELTA_FS:-tmpfs}
DATA=/dev/shm/rdmcp-bench-delta.$$
export RDMCP_NS=rdmcpdelta

# xfs_up: DATA on an xfs with reflinks, room for the largest scenario
# (the source, grown, and each host's old and new copies, with margin)
xfs_up() {
	local s n rate mib size=1024
	command -v mkfs.xfs >/dev/null || {
		echo "$(basename "$0"): BENCH_DELTA_FS=xfs needs mkfs.xfs (apt-get install xfsprogs)" >&2
		exit 2
	}
	for s in $SCENARIOS; do
		IFS=: read -r n rate mib <<<"$s"
		[ $((3 * (n + 2) * mib + 1024)) -le "$size" ] || size=$((3 * (n + 2) * mib + 1024))
	done
	mkdir -p "$DATA"
	truncate -s "${size}M" "$DATA.xfs"
	mkfs.xfs -q -m reflink=1 "$DATA.xfs"
	mount -o loop "$DATA.xfs" "$DATA"
}

case $FS in
tmpfs) ;;
xfs) [ "$(id -u)" -ne 0 ] || xfs_up ;;	# lib.bash says why without root
*) echo "$(basename "$0"): BENCH_DELTA_FS: tmpfs or xfs, not '$FS'" >&2; exit 2 ;;
esac
# shellcheck source-path=SCRIPTDIR source=lib.bash
. "$(dirname "$0")/lib.bash"
# the cluster down (its daemons hold files there) before the file system
xfs_down() {
	"$CLUSTER" down || true
	umount "$DATA" || true
	rm -rf "$DATA" "$DATA.xfs"
}
[ "$FS" != xfs ] || trap xfs_down EXIT

# push LIST [OPTIONS]: "SECONDS SENT" of a push of $DATA/file to /stage/
# on the hosts of LIST (NA NA unless every host ended ok)
push() {
	local out list=$1
	shift
	# shellcheck disable=SC2086
	out=$(timeout -k 5 900 "$CLUSTER" exec 1 "$RDMCP" --json -P "$PORT" \
		-b 1M $OPTS "$@" -d /stage/ "$DATA/file" "$list" 2>>"$DATA/err") || true
	[ -z "${BENCH_VERBOSE:-}" ] || echo "push $*: $(echo "$out" | tail -1)" >&2
	echo "$out" | tail -1 | jq -r 'if .failed == 0 and .complete == .hosts
		then "\(.last) \(.sent)" else "NA NA" end' 2>/dev/null || echo "NA NA"
}

# check N: every host holds the source's bytes
check() {
	local i
	for i in $(seq 2 "$1"); do
		cmp -s "$DATA/file" "$DATA/h$i/stage/file" || {
			echo "$ME: host $i does not hold the source's bytes" >&2
			exit 1
		}
	done
}

# forget N: the hosts' copies removed
forget() {
	rm -f "$DATA"/h*/stage/file
}

# change_blocks MIB: 1 % of the blocks, at scattered offsets, changed
change_blocks() {
	local k=$(($1 / 100 > 0 ? $1 / 100 : 1)) i
	for i in $(seq 1 "$k"); do
		head -c 64 /dev/urandom | dd of="$DATA/file" bs=1 conv=notrunc status=none \
			seek=$(((i * 9973 % $1) * 1048576 + 4096))
	done
}

# resume_run LIST FULL: the time and bytes sent of the run after one
# interrupted at FULL/2 seconds
resume_run() {
	local half
	half=$(awk -v f="$2" 'BEGIN { printf "%.2f", f / 2 }')
	timeout -s INT "$half" "$CLUSTER" exec 1 "$RDMCP" -q -P "$PORT" -b 1M \
		$OPTS -d /stage/ "$DATA/file" "$1" >/dev/null 2>&1 || true
	sleep 0.5	# the daemons see the sender gone, and keep their copies
	push "$1"
}

med() {
	tr ' ' '\n' | grep -v -e '^NA$' -e '^$' | median
}

for s in $SCENARIOS; do
	IFS=: read -r n rate mib <<<"$s"
	echo "== $n hosts at $rate, $mib MiB, $RUNS runs, files on $FS"
	"$CLUSTER" up "$n" "$rate" >/dev/null
	start_daemons "$n"
	list=$(hostlist "$n")
	head -c $((mib << 20)) /dev/urandom >"$DATA/file"
	declare -A t=() b=()
	for r in $(seq 1 "$RUNS"); do
		forget
		read -r tt bb < <(push "$list"); check "$n"
		t[full]+="$tt " b[full]+="$bb "
		change_blocks "$mib"
		sync
		read -r tt bb < <(push "$list" --force); check "$n"
		t[delta]+="$tt " b[delta]+="$bb "
		change_blocks "$mib"
		sync
		read -r tt bb < <(push "$list" --force -W); check "$n"
		t[whole]+="$tt " b[whole]+="$bb "
		head -c $(((mib << 20) / 10)) /dev/urandom >>"$DATA/file"
		sync
		read -r tt bb < <(push "$list" --force); check "$n"
		t[grown]+="$tt " b[grown]+="$bb "
		sync
		read -r tt bb < <(push "$list"); check "$n"
		t[same]+="$tt " b[same]+="$bb "
		truncate -s $((mib << 20)) "$DATA/file"
		forget
		full=$(echo "${t[full]}" | med)
		read -r tt bb < <(resume_run "$list" "$full"); check "$n"
		t[resume]+="$tt " b[resume]+="$bb "
		printf '.' >&2
	done
	echo >&2
	"$CLUSTER" down
	size=$((mib << 20))
	full=$(echo "${t[full]}" | med)
	printf '%-8s %10s %12s %10s\n' "" seconds "sent/file" "/ full"
	for k in full delta whole grown same resume; do
		awk -v k="$k" -v t="$(echo "${t[$k]}" | med)" -v b="$(echo "${b[$k]}" | med)" \
			-v f="$full" -v s="$size" 'BEGIN {
			printf "%-8s %10.3f %12.4f %10.3f\n", k, t, b / s, t / f }'
	done
	unset t b
done
