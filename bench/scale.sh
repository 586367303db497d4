#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/scale.sh - rdmcp at a thousand hosts on one machine, and a check
# that its report is the disk (what 'make bench-scale' runs; no root).
#
# Starts N daemons on loopback addresses 127.1.X.Y (each its own --prefix
# and --state-dir below a tmpfs; its own key and port), pushes a file to
# all of them, and prints the wall time split into bootstrap, first and
# last replica, the bytes the sender sent, the daemons' memory, and a
# report-vs-disk check of every host: a host reported ok must hold a
# byte-identical copy, a host reported failed must hold neither the file
# nor (unless it was killed) a temporary.  The one exception, counted
# apart: a member killed after it landed, before it could say so, which
# no sender can know; its report must say that its copy may be in place
# ("maybe_landed").  After each push (and its check) the copies go and a
# floor is measured: the same copies written by one plain process per core
# with no network (see floor below), and wall / floor printed.  With faults, chosen members are
# killed (SIGKILL) or frozen (SIGSTOP) once their daemon runs the job;
# frozen ones are let go (SIGCONT) after the push and the check waits for
# them to settle, killed ones are started again before the next run.
# At the end every daemon gets SIGTERM and must exit 0; stragglers are
# killed by PID, however the script ends.
#
# Settings (environment):
#   SCALE_HOSTS=1024     daemons
#   SCALE_SIZE=4M        file size (K, M, G suffixes)
#   SCALE_RUNS=3         pushes (each of a new file), medians printed
#   SCALE_PORT=17800     the daemons' port
#   SCALE_OPTS=          more options for the sender (e.g. "-t 2 --retries 1")
#   SCALE_KILL=0         members SIGKILLed during each push
#   SCALE_STOP=0         members SIGSTOPped during each push
#   SCALE_BUSY=0         busy-looping processes while the pushes run
#   SCALE_RERUN=0        1: after each push, push the same file again and
#                        expect every host that had it "already identical"
#   SCALE_REQUIRE_OK=0   1: also fail unless every host that was neither
#                        killed nor frozen ends ok (with --retries)
#   SCALE_FLOOR=1        0: no floor measurement after each push
#   SCALE_DIR=/dev/shm   where the hosts' files live (a tmpfs)
#   SCALE_KEEP=0         1: keep the scratch directory
# Exit status: 0 when every run's report matched the disks (and every
# fault asked for was injected), 1 otherwise.
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
REQUIRE_OK=${SCALE_REQUIRE_OK:-0}
FLOOR=${SCALE_FLOOR:-1}
BASE=${SCALE_DIR:-/dev/shm}
DIR=
PIDS=()		# the daemons
SUPER=()	# the subshells that wait for them
BUSY=()
BAD=0

say() { echo "bench-scale: $*"; }
die() { echo "bench-scale: FAILED: $*" >&2; exit 1; }

kill_by_pid_files() {
	[ -n "$DIR" ] || return 0
	cat "$DIR"/run/pid.* 2>/dev/null | xargs -r kill -KILL 2>/dev/null
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	set +e	# a kill that finds nothing must not end the cleanup
	[ ${#BUSY[@]} -gt 0 ] && kill -KILL "${BUSY[@]}" 2>/dev/null
	[ ${#PIDS[@]} -gt 0 ] && kill -KILL "${PIDS[@]}" 2>/dev/null
	# daemons whose PIDs were not read yet (a failure or a signal while
	# they started) are known by their pid files, also after the
	# subshells that start them (killing those leaves the daemons) are gone
	kill_by_pid_files
	[ ${#SUPER[@]} -gt 0 ] && kill -KILL "${SUPER[@]}" 2>/dev/null
	pkill -KILL -P $$ 2>/dev/null
	wait 2>/dev/null
	kill_by_pid_files
	if [ -n "$DIR" ] && [ "${SCALE_KEEP:-0}" != 1 ]; then
		rm -rf "$DIR"
	elif [ -n "$DIR" ]; then
		echo "bench-scale: kept $DIR" >&2
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

# start_daemon I: host I's daemon, under a subshell that writes its PID
# to pid.I and its exit status to rc.I (a killed daemon is then no job of
# ours to be announced as "Killed")
start_daemon() {
	local i=$1
	mkdir -p "$DIR/h$i/data"
	rm -f "$DIR/run/pid.$i" "$DIR/run/rc.$i"
	(
		rc=0
		# shellcheck disable=SC2016
		sh -c 'echo $$ >"$0"; exec "$@"' "$DIR/run/pid.$i" \
			"$RDMCP" --serve --listen "$(addr "$i"):$PORT" \
			--prefix "$DIR/h$i" --state-dir "$DIR/state/h$i" \
			2>>"$DIR/log/d$i.log" || rc=$?
		echo "$rc" >"$DIR/run/rc.$i"
	) 2>/dev/null &
	SUPER[i]=$!
	PIDS[i]=
}

# daemon_pids: PIDS from the pid files of the daemons just started
daemon_pids() {
	local i
	for i in $(seq 1 "$N"); do
		[ -n "${PIDS[$i]:-}" ] || PIDS[i]=$(cat "$DIR/run/pid.$i")
	done
}

# wait_listening COUNT: until COUNT daemons listen (180 s at most: on a slow machine 1,024 take a minute)
wait_listening() {
	for _ in $(seq 1 1800); do
		[ "$(listening_count)" -ge "$1" ] && return 0
		sleep 0.1
	done
	die "only $(listening_count) of $1 daemons listen after 180 s"
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

# temporaries I -> the temporaries below host I, if any
temporaries() {
	find "$DIR/h$1" -name '.*.rdmcp-*' 2>/dev/null | head -3
}

# check_run JSON FILE: every host's report against its disk.  Prints
# "OK FAILED MISMATCHES UNKNOWABLE[ :details]"; KILLED (host indices) may
# keep temporaries.  A host killed after it landed, before anyone heard
# it say so, cannot be known to hold its copy: if its report says so
# (failed, "maybe_landed") and its daemon's log shows it landed before
# the kill, it counts as unknowable, not as a mismatch.
check_run() {
	local json=$1 name=$2 i host ok maybe file bad=0 okn=0 failn=0 unk=0 list=""
	declare -A rep=() mayb=()
	while IFS=$'\t' read -r host ok maybe; do
		rep[$host]=$ok
		mayb[$host]=$maybe
	done < <(jq -r 'select(.event == "replica") |
		[.host, (.ok | tostring), (.maybe_landed | tostring)] | @tsv' "$json")
	for i in $(seq 1 "$N"); do
		host="$(addr "$i"):$PORT"
		file=$DIR/h$i/data/$name
		ok=${rep[$host]:-missing}
		case $ok in
		true)
			okn=$((okn + 1))
			cmp -s "$SRC" "$file" ||
				{ bad=$((bad + 1)); list="$list $host(ok,disk-differs)"; } ;;
		false)
			failn=$((failn + 1))
			if [ ! -e "$file" ]; then
				:
			elif [ -n "${KILLED[$i]:-}" ] && [ "${mayb[$host]}" = true ] &&
				grep -q "complete, .* in place" "$DIR/log/d$i.log" &&
				cmp -s "$SRC" "$file"; then
				unk=$((unk + 1)); list="$list $host(killed-after-landing,reported-maybe)"
			else
				bad=$((bad + 1)); list="$list $host(failed,disk-has-it)"
			fi ;;
		*)
			bad=$((bad + 1)); list="$list $host(not-reported)" ;;
		esac
		if [ -z "${KILLED[$i]:-}" ] && [ -n "$(temporaries "$i")" ]; then
			bad=$((bad + 1)); list="$list $host(temporaries-left)"
		fi
		if [ "$REQUIRE_OK" = 1 ] && [ "$ok" != true ] &&
			[ -z "${KILLED[$i]:-}${STOPPED[$i]:-}" ]; then
			bad=$((bad + 1)); list="$list $host(survivor-not-ok: $(jq -r --arg h "$host" \
				'select(.event == "replica" and .host == $h) | .reason' "$json" | head -1))"
		fi
	done
	echo "$okn $failn $bad $unk${list:+ :$list}"
}

# fault: once every victim's daemon runs the job (a "rank" line in its
# log), kill and freeze them all at once; writes what it did to
# $DIR/fault.  Nothing is done if the push ends first.
fault() {
	local v i=0 ready logs=()
	for v in "${VICTIMS[@]}"; do logs+=("$DIR/log/d$v.log"); done
	while [ ! -e "$DIR/pushed" ]; do
		# one grep for all victims: this loop runs starved too
		ready=$({ grep -l ": rank " "${logs[@]}" 2>/dev/null || true; } | wc -l)
		[ "$ready" -eq "${#VICTIMS[@]}" ] && break
		sleep 0.02
	done
	[ ! -e "$DIR/pushed" ] || return 0
	for v in "${VICTIMS[@]}"; do
		if [ "$i" -lt "$NKILL" ]; then
			kill -KILL "${PIDS[$v]}" && echo "killed $v" >>"$DIR/fault"
		else
			kill -STOP "${PIDS[$v]}" && echo "stopped $v" >>"$DIR/fault"
		fi
		i=$((i + 1))
	done
	echo "at $(date +%s.%N)" >>"$DIR/fault"
}

# settle: let the frozen daemons go, and wait until each has said what
# became of its job (30 s at most)
settle() {
	local v
	for v in "${!STOPPED[@]}"; do
		kill -CONT "${PIDS[$v]}" 2>/dev/null || true
	done
	for v in "${!STOPPED[@]}"; do
		for _ in $(seq 1 300); do
			grep -qE "job [0-9a-f]+: (failed|complete|the sender went away|ended|stopped)" \
				"$DIR/log/d$v.log" && break
			sleep 0.1
		done
	done
}

# stop_daemons: SIGTERM, every daemon alive must exit 0 within 30 s
stop_daemons() {
	local i rc bad=0
	for i in $(seq 1 "$N"); do
		kill -TERM "${PIDS[$i]}" 2>/dev/null || true
	done
	for i in $(seq 1 "$N"); do
		timeout 30 tail --pid="${PIDS[$i]}" -f /dev/null || true
		# its subshell writes rc.I as it exits
		for _ in $(seq 1 50); do
			[ ! -e "$DIR/run/rc.$i" ] || break
			sleep 0.1
		done
		rc=$(cat "$DIR/run/rc.$i" 2>/dev/null || echo "none (still running?)")
		if [ "$rc" != 0 ]; then
			bad=$((bad + 1))
			echo "bench-scale: daemon $i exited $rc:" >&2
			tail -3 "$DIR/log/d$i.log" >&2
		fi
	done
	wait "${SUPER[@]}" 2>/dev/null || true
	PIDS=()
	SUPER=()
	[ "$bad" -eq 0 ] || { say "$bad daemons did not exit 0 on SIGTERM"; BAD=$((BAD + bad)); }
}

command -v jq >/dev/null || die "jq is needed"
[ -x "$RDMCP" ] || die "$RDMCP is missing (run 'make')"
[ "$(ulimit -Hn)" -ge $((N + 64)) ] || die "the open file limit ($(ulimit -Hn)) is below $N hosts"
ulimit -n "$(ulimit -Hn)"
[ "$(listening_count)" -eq 0 ] || die "something already listens on 127.1.*:$PORT"

DIR=$(mktemp -d "$BASE/rdmcp-scale.XXXXXX")
mkdir -p "$DIR/log" "$DIR/src" "$DIR/state" "$DIR/run"
"$RDMCP" -q --genkey "$DIR/key"
export RDMCP_KEY=$DIR/key
HOSTS=$(for i in $(seq 1 "$N"); do printf '%s:%s,' "$(addr "$i")" "$PORT"; done)
HOSTS=${HOSTS%,}
say "$N daemons, $SIZE, $RUNS runs, options '$OPTS', kill $NKILL, stop $NSTOP, busy $NBUSY; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
t0=$(date +%s.%N)
for i in $(seq 1 "$N"); do start_daemon "$i"; done
wait_listening "$N"
daemon_pids
say "daemons up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s; private memory median/max $(mem_summary) KiB"
for i in $(seq 1 "$NBUSY"); do
	( while :; do :; done ) &
	BUSY+=($!)
done

# floor SRC: seconds to write SRC to every host's directory with no
# network and no daemon: one `tee` per core, each writing its share of the
# hosts' copies, then the copies go.  The same bytes onto the same tmpfs
# as the push, right after the push's copies were removed (so into the
# memory they freed, as the next push will be): the least a push can take
# on this machine's memory.  On a VM that hands freed memory back to its
# host, memory touched for the first time costs several times more.
floor() {
	local src=$1 w nw t0 t1 files
	nw=$(nproc)
	t0=$(date +%s.%N)
	for w in $(seq 0 $((nw - 1))); do
		files=()
		for i in $(seq $((w + 1)) "$nw" "$N"); do files+=("$DIR/h$i/data/.floor"); done
		tee "${files[@]}" <"$src" >/dev/null &
	done
	wait	# (in $(...): only the writers are our children)
	t1=$(date +%s.%N)
	rm -f "$DIR"/h*/data/.floor
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

# push NAME OUT: the file to every host as /data/NAME; prints its status
push() {
	local rc=0 tm=()
	# the sender's peak memory and CPU time, where GNU time can tell them
	[ ! -x /usr/bin/time ] || tm=(/usr/bin/time -f "%M %U %S" -o "$2.rss")
	# shellcheck disable=SC2086
	timeout -k 5 900 "${tm[@]}" "$RDMCP" --json $OPTS -d /data "$DIR/src/$1" "$HOSTS" \
		>"$2" 2>"$2.err" || rc=$?
	echo "$rc"
}

for run in $(seq 1 "$RUNS"); do
	declare -A KILLED=() STOPPED=()
	name=r$run.bin
	SRC=$DIR/src/$name
	head -c "$(numfmt --from=iec "$SIZE")" /dev/urandom >"$SRC"
	rm -f "$DIR/pushed" "$DIR/fault"
	# the hosts share this machine's memory: earlier runs' copies go
	if [ "$run" -gt 1 ]; then
		rm -f "$DIR"/h*/data/r$((run - 1)).bin "$DIR/src/r$((run - 1)).bin"
	fi
	if [ "${SCALE_KEEP:-0}" = 1 ] && [ "$run" -gt 1 ]; then
		mkdir -p "$DIR/log.$((run - 1))"
		cp "$DIR"/log/d*.log "$DIR/log.$((run - 1))/"
	fi
	for i in $(seq 1 "$N"); do : >"$DIR/log/d$i.log"; done
	mapfile -t VICTIMS < <(seq 1 "$N" | shuf -n $((NKILL + NSTOP)))
	fpid=
	if [ $((NKILL + NSTOP)) -gt 0 ]; then
		fault &
		fpid=$!
	fi
	s0=$(date +%s.%N)
	rc=$(push "$name" "$DIR/run$run.json")
	s1=$(date +%s.%N)
	touch "$DIR/pushed"
	[ -z "$fpid" ] || wait "$fpid" || true
	while read -r what v; do
		[ "$what" = killed ] && KILLED[$v]=1
		[ "$what" = stopped ] && STOPPED[$v]=1
	done < <(cat "$DIR/fault" 2>/dev/null)
	settle
	wall=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')
	read -r okn failn bad unk rest <<<"$(check_run "$DIR/run$run.json" "$name")"
	injected="killed ${#KILLED[@]} of $NKILL, frozen ${#STOPPED[@]} of $NSTOP"
	at=$(sed -n 's/^at //p' "$DIR/fault" 2>/dev/null || true)
	[ -z "$at" ] || injected="$injected at $(awk -v a="$s0" -v b="$at" 'BEGIN { printf "%.2f", b - a }') s"
	if [ "${#KILLED[@]}" -ne "$NKILL" ] || [ "${#STOPPED[@]}" -ne "$NSTOP" ]; then
		bad=$((bad + 1)); rest="$rest faults-not-injected"
	fi
	BAD=$((BAD + bad))
	read -r rss cpu_u cpu_s < <(tail -n 1 "$DIR/run$run.json.rss" 2>/dev/null || echo "- - -")
	chk="ok $okn failed $failn mismatches $bad"
	[ "$unk" -eq 0 ] || chk="$chk, killed after landing and reported so (maybe landed) $unk"
	jq -r --arg wall "$wall" --arg rc "$rc" --arg chk "$chk" \
		--arg inj "$injected" --arg rss "$rss" --arg cpu "$cpu_u user $cpu_s sys" \
		'select(.event == "summary") |
		 "run: wall \($wall) s, exit \($rc), bootstrap \(.setup) s, first \(.first) s, last \(.last) s, attempts \(.attempts), sent \(.sent) B, sender peak RSS \($rss) KiB, CPU \($cpu) s; \($inj); report vs disk: \($chk)"' \
		"$DIR/run$run.json"
	[ -z "$rest" ] || echo "  mismatches:$rest" | cut -c1-2000
	echo "$wall" >>"$DIR/walls"
	if [ "$RERUN" = 1 ]; then	# the killed ones are still down
		rc=$(push "$name" "$DIR/rerun$run.json")
		same=$(jq -r 'select(.event == "replica" and .ok and .identical) | .host' "$DIR/rerun$run.json" | wc -l)
		want=$(jq -r 'select(.event == "replica" and .ok) | .host' "$DIR/run$run.json" |
			grep -cvxF -f <(for v in "${!KILLED[@]}"; do echo "$(addr "$v"):$PORT"; done; echo none) || true)
		echo "  again: exit $rc, $same hosts already identical, of $want that had it and run"
		[ "$same" -ge "$want" ] || BAD=$((BAD + 1))
	fi
	# the copies go, and the floor is measured in the memory they freed
	rm -f "$DIR"/h*/data/"$name"
	if [ "$FLOOR" = 1 ]; then
		fl=$(floor "$SRC")
		echo "$fl" >>"$DIR/floors"
		echo "  floor: the same $N copies written with no network ($(nproc) writers) $fl s; wall / floor $(awk -v w="$wall" -v f="$fl" 'BEGIN { printf "%.2f", w / f }')"
	fi
	# the killed daemons come back, as a service manager would start them
	for v in "${!KILLED[@]}"; do
		wait "${SUPER[$v]}" 2>/dev/null || true
		start_daemon "$v"
	done
	wait_listening "$N"
	daemon_pids
done
sleep 2	# idle again: a daemon gives freed memory back 1 s after its last job
[ "$FLOOR" != 1 ] || say "median floor $(median <"$DIR/floors") s (no network: the copies alone)"
say "median wall $(median <"$DIR/walls") s over $RUNS runs; daemons' private memory, idle again, median/max $(mem_summary) KiB"
if [ ${#BUSY[@]} -gt 0 ]; then	# (a bare 'wait' would wait for the daemons)
	kill -KILL "${BUSY[@]}" 2>/dev/null
	wait "${BUSY[@]}" 2>/dev/null || true
fi
BUSY=()
stop_daemons
say "report/disk mismatches and other faults: $BAD"
[ "$BAD" -eq 0 ]
