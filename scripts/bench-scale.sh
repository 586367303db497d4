#!/usr/bin/env bash
# bench-scale.sh - rdmcp at a thousand hosts on one machine, and a check
# that its report is the disk (what 'make bench-scale' runs; no root).
#
# Starts N daemons on loopback addresses 127.1.X.Y (each its own --prefix
# below a tmpfs, its own key, its own port), pushes a file to all of them,
# and prints the wall time split into bootstrap, first and last replica,
# the bytes the sender sent, the daemons' memory, and a report-vs-disk
# check of every host: a host reported ok must hold a byte-identical copy,
# a host reported failed must hold neither the file nor a temporary.
# Every daemon is killed by PID at the end, however the script ends.
#
# Settings (environment):
#   SCALE_HOSTS=1024     daemons
#   SCALE_SIZE=4M        file size (K, M, G suffixes)
#   SCALE_RUNS=3         pushes (a fresh destination each), medians printed
#   SCALE_PORT=17800     the daemons' port
#   SCALE_OPTS=          more options for the sender (e.g. "-t 2 --retries 1")
#   SCALE_KILL=0         members SIGKILLed during each push
#   SCALE_STOP=0         members SIGSTOPped during each push (SIGCONT after)
#   SCALE_BUSY=0         busy-looping processes while the pushes run
#   SCALE_RERUN=0        1: push the same file again to the same hosts and
#                        expect every host "already identical"
#   SCALE_DIR=/dev/shm   where the hosts' files live (a tmpfs)
#   SCALE_KEEP=0         1: keep the scratch directory
# Exit status: 0 when every run's report matched the disks, 1 otherwise.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RDMCP=${RDMCP:-$TOP/rdmcp}
N=${SCALE_HOSTS:-1024}
SIZE=${SCALE_SIZE:-4M}
RUNS=${SCALE_RUNS:-3}
PORT=${SCALE_PORT:-17800}
OPTS=${SCALE_OPTS:-}
NKILL=${SCALE_KILL:-0}
NSTOP=${SCALE_STOP:-0}
NBUSY=${SCALE_BUSY:-0}
RERUN=${SCALE_RERUN:-0}
BASE=${SCALE_DIR:-/dev/shm}
DIR=
PIDS=()
BUSY=()
MISMATCH_TOTAL=0

say() { echo "bench-scale: $*"; }
die() { echo "bench-scale: FAILED: $*" >&2; exit 1; }

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[ ${#BUSY[@]} -gt 0 ] && kill -KILL "${BUSY[@]}" 2>/dev/null
	if [ ${#PIDS[@]} -gt 0 ]; then
		kill -KILL "${PIDS[@]}" 2>/dev/null
		wait 2>/dev/null
	fi
	if [ -n "$DIR" ] && [ "${SCALE_KEEP:-0}" != 1 ]; then
		rm -rf "$DIR"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# addr I -> 127.1.X.Y, host I = 1..N
addr() {
	echo "127.1.$(($1 / 250)).$(($1 % 250 + 2))"
}

# listening_count: how many of our daemons accept on $PORT
listening_count() {
	ss -Hltn "sport = :$PORT" 2>/dev/null | grep -c '127\.1\.' || true
}

start_daemons() {
	local i
	for i in $(seq 1 "$N"); do
		mkdir -p "$DIR/h$i/data"
		"$RDMCP" --serve --listen "$(addr "$i"):$PORT" --prefix "$DIR/h$i" \
			--state-dir '' 2>>"$DIR/log/d$i.log" &
		PIDS[$i]=$!
	done
	for i in $(seq 1 600); do	# 60 s at most
		[ "$(listening_count)" -ge "$N" ] && return 0
		sleep 0.1
	done
	die "only $(listening_count) of $N daemons listen after 60 s"
}

# private_kib PID -> private dirty memory of the process, KiB
private_kib() {
	awk '/^Private_Dirty:/ { print $2 }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0
}

# mem_summary -> "median/max" private dirty KiB over the daemons
mem_summary() {
	local i
	for i in $(seq 1 "$N"); do
		private_kib "${PIDS[$i]}"
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%d/%d", a[int((NR + 1) / 2)], a[NR] }'
}

median() {
	sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "-" }'
}

# check_run RUN JSON -> counts mismatches between the report and the disks
check_run() {
	local run=$1 json=$2 i host ok file bad=0 okn=0 failn=0 list=""
	declare -A rep=()
	while IFS=$'\t' read -r host ok; do
		rep[$host]=$ok
	done < <(jq -r 'select(.event == "replica") | [.host, (.ok | tostring)] | @tsv' "$json")
	for i in $(seq 1 "$N"); do
		host="$(addr "$i"):$PORT"
		file=$DIR/h$i/data/r$run.bin
		ok=${rep[$host]:-missing}
		case $ok in
		true)
			okn=$((okn + 1))
			if ! cmp -s "$SRC" "$file"; then
				bad=$((bad + 1)); list="$list $host(ok,disk-differs)"
			fi ;;
		false)
			failn=$((failn + 1))
			if [ -e "$file" ]; then
				bad=$((bad + 1)); list="$list $host(failed,disk-has-it)"
			fi ;;
		*)
			bad=$((bad + 1)); list="$list $host(not-reported)" ;;
		esac
	done
	if [ -n "$(find "$DIR" -path "$DIR/h*" -name '.*.rdmcp-*' 2>/dev/null | head -1)" ]; then
		bad=$((bad + 1)); list="$list temporaries-left"
	fi
	echo "$okn $failn $bad${list:+ :$list}"
}

command -v jq >/dev/null || die "jq is needed"
[ -x "$RDMCP" ] || die "$RDMCP is missing (run 'make')"
[ "$(ulimit -Hn)" -ge $((N + 64)) ] || die "the open file limit ($(ulimit -Hn)) is below $N hosts"
ulimit -n "$(ulimit -Hn)"
[ "$(listening_count)" -eq 0 ] || die "something already listens on 127.1.*:$PORT"

DIR=$(mktemp -d "$BASE/rdmcp-scale.XXXXXX")
mkdir -p "$DIR/log" "$DIR/src"
"$RDMCP" -q --genkey "$DIR/key"
export RDMCP_KEY=$DIR/key
SRC=$DIR/src/payload.bin
head -c "$(numfmt --from=iec "$SIZE")" /dev/urandom >"$SRC"
HOSTS=$(for i in $(seq 1 "$N"); do printf '%s:%s,' "$(addr "$i")" "$PORT"; done)
HOSTS=${HOSTS%,}
say "$N daemons, $SIZE, $RUNS runs, options '${OPTS}', kill $NKILL, stop $NSTOP, busy $NBUSY; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
t0=$(date +%s.%N)
start_daemons
say "daemons up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s; private memory median/max $(mem_summary) KiB"
for i in $(seq 1 "$NBUSY"); do
	( while :; do :; done ) &
	BUSY+=($!)
done

# fault RUN: kill and stop members once their daemons run the job
fault() {
	local run=$1 victims=() i v t
	[ $((NKILL + NSTOP)) -gt 0 ] || return 0
	mapfile -t victims < <(seq 2 "$N" | shuf -n $((NKILL + NSTOP)) --random-source=<(yes "$run"))
	for v in "${victims[@]}"; do
		for t in $(seq 1 600); do
			grep -q ": rank " "$DIR/log/d$v.log" 2>/dev/null && break
			[ -e "$DIR/pushed" ] && return 0
			sleep 0.05
		done
	done
	for i in "${!victims[@]}"; do
		v=${victims[$i]}
		if [ "$i" -lt "$NKILL" ]; then
			kill -KILL "${PIDS[$v]}"
		else
			kill -STOP "${PIDS[$v]}"
			echo "${PIDS[$v]}" >>"$DIR/stopped"
		fi
	done
	echo "${victims[*]}" >"$DIR/victims.$run"
}

for run in $(seq 1 "$RUNS"); do
	rm -f "$DIR/pushed" "$DIR/stopped"
	: >"$DIR/log/marker"
	for i in $(seq 1 "$N"); do : >"$DIR/log/d$i.log"; done
	fault "$run" &
	fpid=$!
	s0=$(date +%s.%N)
	rc=0
	timeout -k 5 600 "$RDMCP" --json $OPTS -d /data "$SRC" "$HOSTS" \
		>"$DIR/run$run.json" 2>"$DIR/run$run.err" || rc=$?
	s1=$(date +%s.%N)
	touch "$DIR/pushed"
	wait "$fpid" || true
	if [ -f "$DIR/stopped" ]; then
		mapfile -t st <"$DIR/stopped"
		kill -CONT "${st[@]}" 2>/dev/null || true
	fi
	# every file was renamed as <src base name>; keep each run apart
	for i in $(seq 1 "$N"); do
		[ -e "$DIR/h$i/data/payload.bin" ] && mv "$DIR/h$i/data/payload.bin" "$DIR/h$i/data/r$run.bin"
	done
	wall=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')
	read -r okn failn bad rest <<<"$(check_run "$run" "$DIR/run$run.json")"
	MISMATCH_TOTAL=$((MISMATCH_TOTAL + bad))
	jq -r --arg wall "$wall" --arg rc "$rc" --arg chk "ok $okn failed $failn mismatches $bad" \
		'select(.event == "summary") |
		 "run: wall \($wall) s, exit \($rc), bootstrap \(.setup // "-") s, first \(.first) s, last \(.last) s, sent \(.sent // "-") B; report vs disk: \($chk)"' \
		"$DIR/run$run.json"
	[ -z "$rest" ] || echo "  mismatches:$rest" | cut -c1-2000
	echo "$wall" >>"$DIR/walls"
done
say "median wall $(median <"$DIR/walls") s over $RUNS runs; daemons' private memory now median/max $(mem_summary) KiB; report/disk mismatches: $MISMATCH_TOTAL"
[ "$MISMATCH_TOTAL" -eq 0 ]
