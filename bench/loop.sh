#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/loop.sh - rdmcp's per-byte cost on loopback, no root needed (what
# 'make bench-loop' runs).  The network is memory here, so what it shows
# is the CPU and memory work rdmcp does per byte, not a network's speed.
#
# 1. 1 -> 1: rdmcp (default options, no --verify) pushes a 256 MiB file
#    from tmpfs to one daemon on 127.2.0.1 whose --prefix is on tmpfs
#    (/dev/shm), against a plain copy of the same file to the same tmpfs
#    with 'dd bs=1M' (one read(2) and one write(2) per MiB, no network);
#    both timed the same way, as the wall time of the whole command, 5
#    runs each, alternating (dd first in odd rounds, rdmcp first in even
#    ones), medians; prints rdmcp's speed over dd's.
# 2. fan-out: a 64 MiB file from one sender to 4, 8 and 16 daemons on
#    127.2.0.1 .. 127.2.0.16, each with its own --prefix under /dev/shm,
#    default options; prints, from the --json summary, the time to the
#    first and the last replica, the per-replica payload rate (file bits /
#    time to the last replica) and the aggregate (that times the number of
#    replicas), in Gbit/s; medians of 3.
# Prints the load before and after: on a machine that is not idle (load
# above 0.5) the figures are noisy, and it says so.  The daemons and the
# scratch directory go however the script ends.
#
# Settings (environment): BENCH_LOOP_MIB (256), BENCH_LOOP_RUNS (5),
# BENCH_LOOP_FAN_MIB (64), BENCH_LOOP_FANOUT ("4 8 16"),
# BENCH_LOOP_FAN_RUNS (3), BENCH_LOOP_PORT (7473), RDMCP (the build to
# measure; ./rdmcp), BENCH_OPTS (extra
# options of every rdmcp run).
set -euo pipefail
export LC_ALL=C	# a dot in $EPOCHREALTIME and in awk's numbers

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RDMCP=${RDMCP:-$TOP/rdmcp}	# another build: RDMCP=path
MIB=${BENCH_LOOP_MIB:-256}
RUNS=${BENCH_LOOP_RUNS:-5}
FAN_MIB=${BENCH_LOOP_FAN_MIB:-64}
FANOUT=${BENCH_LOOP_FANOUT:-4 8 16}
FAN_RUNS=${BENCH_LOOP_FAN_RUNS:-3}
PORT=${BENCH_LOOP_PORT:-7473}
OPTS=${BENCH_OPTS:-}
TMO=300		# seconds any one command may take
DIR=
PIDS=()		# the daemons
BG=		# the command in progress

die() { echo "bench-loop: $*" >&2; exit 1; }

cleanup() {
	local rc=$? pid alive
	trap - EXIT INT TERM
	if [ -n "$BG" ]; then
		kill -TERM "$BG" 2>/dev/null || true
		wait "$BG" 2>/dev/null || true
	fi
	if [ ${#PIDS[@]} -gt 0 ]; then
		kill -TERM "${PIDS[@]}" 2>/dev/null || true
		for _ in $(seq 1 50); do	# 5 s to exit, then KILL
			alive=0
			for pid in "${PIDS[@]}"; do
				kill -0 "$pid" 2>/dev/null && alive=1
			done
			[ "$alive" -eq 0 ] && break
			sleep 0.1
		done
		kill -KILL "${PIDS[@]}" 2>/dev/null || true
		for pid in "${PIDS[@]}"; do
			wait "$pid" 2>/dev/null || true
		done
	fi
	[ -n "$DIR" ] && rm -rf "$DIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# median: of the numbers on standard input, one per line (none: nothing)
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

addr() { echo "127.2.0.$1"; }

listening() {
	(exec 3<>"/dev/tcp/$1/$PORT") 2>/dev/null
}

# run OUT CMD...: run CMD (bounded by TMO) with its output to OUT, in the
# background so that a signal reaches our trap at once (bash drops a
# Ctrl-C that its foreground child survives); fails as CMD does
run() {
	local out=$1 rc=0
	shift
	timeout -k 5 "$TMO" "$@" >"$out" &
	BG=$!
	wait "$BG" || rc=$?
	BG=
	return "$rc"
}

# wall CMD...: run CMD, set WALL to its wall time in seconds
wall() {
	local t0 t1
	t0=$EPOCHREALTIME
	run /dev/null "$@" || die "failed: $*"
	t1=$EPOCHREALTIME
	t1=$((10#${t1/./} - 10#${t0/./}))	# microseconds
	printf -v WALL '%d.%06d' $((t1 / 1000000)) $((t1 % 1000000))
}

load() {
	uptime | sed 's/.*load/load/'
}

[ -x "$RDMCP" ] || die "$RDMCP is missing (run 'make')"
[[ $PORT =~ ^[0-9]+$ ]] || die "BENCH_LOOP_PORT must be a port number"
max_fan=0
for k in $FANOUT; do
	if ! [[ $k =~ ^[1-9][0-9]*$ ]] || [ "$k" -gt 250 ]; then
		die "BENCH_LOOP_FANOUT: 1..250 daemons"
	fi
	[ "$k" -gt "$max_fan" ] && max_fan=$k
done
[ "$max_fan" -ge 1 ] || max_fan=1
need=$(((2 * MIB + (max_fan + 1) * FAN_MIB + 64) << 10))	# KiB
[ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt "$need" ] ||
	die "/dev/shm has less than $((need >> 10)) MiB free"

echo "bench-loop: $(nproc) cores, $(load)"
awk '$1 > 0.5 { print "bench-loop: WARNING: the machine is not idle (load " $1 "): the figures will be noisy" }' /proc/loadavg
DIR=$(mktemp -d /dev/shm/rdmcp-bench-loop.XXXXXX)
"$RDMCP" -q --genkey "$DIR/key"
export RDMCP_KEY=$DIR/key

for i in $(seq 1 "$max_fan"); do
	listening "$(addr "$i")" && die "$(addr "$i"):$PORT is in use (set BENCH_LOOP_PORT)"
done
for i in $(seq 1 "$max_fan"); do
	mkdir -p "$DIR/h$i/out"
	"$RDMCP" --serve -q --listen "$(addr "$i"):$PORT" --prefix "$DIR/h$i" \
		2>"$DIR/h$i.log" &
	PIDS+=($!)
done
for i in $(seq 1 "$max_fan"); do
	for _ in $(seq 1 100); do	# 5 s at most
		listening "$(addr "$i")" && continue 2
		sleep 0.05
	done
	cat "$DIR/h$i.log" >&2
	die "the daemon on $(addr "$i"):$PORT did not start"
done

# 1. rdmcp 1 -> 1 against dd, into tmpfs
mkdir -p "$DIR/src"
head -c "$((MIB << 20))" /dev/urandom >"$DIR/src/big"
for r in $(seq 1 "$RUNS"); do
	order="dd rdmcp"
	[ $((r % 2)) -eq 1 ] || order="rdmcp dd"
	for what in $order; do
		rm -f "$DIR/dd.out" "$DIR/h1/out/big"
		if [ "$what" = dd ]; then
			wall dd if="$DIR/src/big" of="$DIR/dd.out" bs=1M status=none
		else
			# shellcheck disable=SC2086
			wall "$RDMCP" -q $OPTS -d /out "$DIR/src/big" "$(addr 1):$PORT"
			cmp -s "$DIR/src/big" "$DIR/h1/out/big" || die "rdmcp's copy differs"
		fi
		echo "$what $WALL"
	done
done >"$DIR/one.txt"
rm -f "$DIR/dd.out" "$DIR/h1/out/big"
dd_s=$(awk '$1 == "dd" { print $2 }' "$DIR/one.txt" | median)
rd_s=$(awk '$1 == "rdmcp" { print $2 }' "$DIR/one.txt" | median)
echo
echo "1 -> 1: $MIB MiB into tmpfs, wall time of the whole command, $RUNS runs each, alternating, medians"
awk -v mib="$MIB" -v d="$dd_s" -v r="$rd_s" -v opts="$OPTS" 'BEGIN {
	bits = mib * 1048576 * 8
	printf "  %-36s %8.3f s %7.2f Gbit/s\n", "dd bs=1M (read + write, no network)", d, bits / d / 1e9
	printf "  %-36s %8.3f s %7.2f Gbit/s\n", "rdmcp " (opts ? opts " " : "") "to 1 daemon on 127.2.0.1", r, bits / r / 1e9
	printf "  rdmcp speed / plain copy speed: %.3f\n", d / r
}'

# 2. fan-out
head -c "$((FAN_MIB << 20))" /dev/urandom >"$DIR/src/fan"
echo
echo "fan-out: $FAN_MIB MiB from one sender to K daemons on 127.2.0.x, $FAN_RUNS runs, medians"
printf '  %3s %9s %9s %9s %19s %17s\n' K "setup s" "first s" "last s" "per replica Gbit/s" "aggregate Gbit/s"
for k in $FANOUT; do
	hosts=
	for i in $(seq 1 "$k"); do
		hosts="$hosts${hosts:+,}$(addr "$i"):$PORT"
	done
	for r in $(seq 1 "$FAN_RUNS"); do
		rm -f "$DIR"/h*/out/fan
		# shellcheck disable=SC2086
		run "$DIR/json" "$RDMCP" --json $OPTS -d /out "$DIR/src/fan" "$hosts" ||
			die "rdmcp to $k daemons failed: $(tail -2 "$DIR/json")"
		out=$(cat "$DIR/json")
		echo "$out" | grep -q "\"complete\":$k,\"failed\":0" || die "rdmcp to $k daemons: $(echo "$out" | tail -1)"
		echo "$out" | awk '/"event":"summary"/ {
			for (i = 1; i <= 3; i++) {
				name = i == 1 ? "setup" : i == 2 ? "first" : "last"
				v[i] = "NA"
				if (match($0, "\"" name "\":[0-9.]+"))
					v[i] = substr($0, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
			}
			print v[1], v[2], v[3]
		}'
	done >"$DIR/fan.txt"
	rm -f "$DIR"/h*/out/fan
	awk -v k="$k" -v mib="$FAN_MIB" -v f="$(awk '{ print $2 }' "$DIR/fan.txt" | median)" \
		-v l="$(awk '{ print $3 }' "$DIR/fan.txt" | median)" \
		-v s="$(awk '$1 != "NA" { print $1 }' "$DIR/fan.txt" | median)" 'BEGIN {
		per = mib * 1048576 * 8 / l / 1e9
		printf "  %3d %9s %9.3f %9.3f %19.2f %17.2f\n", k, s == "" ? "-" : sprintf("%.3f", s), f, l, per, per * k
	}'
done
echo
echo "bench-loop: $(load) (at the end)"
