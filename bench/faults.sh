#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/faults.sh - a push while members die and freeze, against the same
# push undisturbed (what 'make bench-faults' runs; root: network
# namespaces).  Issue 37's figure: 64 hosts at 20 Mbit/s, 64 MiB, 3
# members killed and 2 frozen at random moments.
#
# For each scenario N:RATE:MIB, builds N hosts whose NICs run at RATE
# (scripts/netns-cluster.sh; namespaces rdmcpfault-*), daemons on hosts
# 2..N (each its own --prefix below a tmpfs, its log read for events),
# and pushes from host 1 a new file of MIB MiB each time:
#   undisturbed  RUNS pushes: medians of the wall time (the sender's
#                whole run), the time to the last replica and the bytes
#                the sender sent over the file's size
#   faults       FAULT_RUNS pushes, each with KILL members SIGKILLed and
#                STOP members SIGSTOPped, chosen at random among hosts
#                2..N.  Each fault waits for its event, the victim's
#                daemon logging that it runs the job ("rank R of N"),
#                then a further delay drawn uniformly below 0.9 x the
#                undisturbed median time to the last replica, so that it
#                lands at a random moment of the transfer; a fault whose
#                push ended first is not injected, and that run counts
#                as a failure.  After the push the frozen daemons are let
#                go (SIGCONT) and the check waits until each has ended
#                its job; the killed ones are started again before the
#                next push.
# After every push each host's report is checked against its disk: a
# host reported ok must hold a byte-identical copy; a host reported
# failed must not hold the file under its final name unless its report
# says its copy may be in place (maybe_landed), and then the copy must be
# identical; every host must be reported; no host that was not killed
# may keep a named temporary.  A mismatch is printed loudly and makes the
# exit status 1; the copies go before the next push.
#
# Prints one line per fault run (wall, sent/file, attempts, ok/failed,
# the faults and when they landed, mismatches) and a table: the
# undisturbed medians, the fault runs' median/min/max wall, (median -
# the detection time -t) over the undisturbed median wall (goal <= 1.5),
# sent/file median and max (goal <= 1.3), runs with report = disk.
#
# Settings (environment):
#   BENCH_FAULTS_SCENARIOS  "64:20mbit:64" (hosts keep one copy each in
#                           /dev/shm: N x MIB)
#   BENCH_RUNS              undisturbed pushes (3)
#   BENCH_FAULT_RUNS        pushes with faults (10)
#   BENCH_FAULT_KILL        members killed per push (3)
#   BENCH_FAULT_STOP        members frozen per push (2)
#   BENCH_FAULT_OPTS        the sender's options ("-t 5 --retries 2
#                           --json"; --json is added if missing)
#   BENCH_PUSH_TIMEOUT      seconds a push may take at most (900)
#   BENCH_PORT              the daemons' port (7471)
#   BENCH_FAULTS_KEEP       a directory to keep each fault run's output
#                           in (rN.json, rN.err: the sender's stdout and
#                           stderr; rN.faults: what was injected when)
# Above 32 hosts the kernel's ARP table (net.ipv4.neigh.default.
# gc_thresh1..3, shared by every namespace) is raised to 4, 16 and 32
# entries per host when it is smaller, never lowered; at exit it is put
# back if nobody changed it meanwhile.  Every wait has a time limit; the
# namespaces, daemons and files it made go however it ends.
set -euo pipefail

SCENARIOS=${BENCH_FAULTS_SCENARIOS:-64:20mbit:64}
RUNS=${BENCH_RUNS:-3}
FRUNS=${BENCH_FAULT_RUNS:-10}
NKILL=${BENCH_FAULT_KILL:-3}
NSTOP=${BENCH_FAULT_STOP:-2}
OPTS=${BENCH_FAULT_OPTS:--t 5 --retries 2 --json}
PUSH_LIMIT=${BENCH_PUSH_TIMEOUT:-900}
DATA=/dev/shm/rdmcp-bench-faults.$$
export RDMCP_NS=rdmcpfault
INJ=()		# the fault injectors (subshells) of the current push
ARP_OLD=""	# gc_thresh1..3 before we raised them
ARP_NEW=""	# what we set
# shellcheck source-path=SCRIPTDIR source=lib.bash
. "$(dirname "$0")/lib.bash"

ARP_KEYS="net.ipv4.neigh.default.gc_thresh1 net.ipv4.neigh.default.gc_thresh2 net.ipv4.neigh.default.gc_thresh3"

arp_values() {
	# shellcheck disable=SC2086
	sysctl -n $ARP_KEYS | tr '\n' ' ' | sed 's/ $//'
}

faults_cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	set +e
	[ ${#INJ[@]} -eq 0 ] || kill -KILL "${INJ[@]}" 2>/dev/null
	bench_cleanup	# our namespaces (every daemon and sender in them), $DATA
	if [ -n "$ARP_OLD" ] && [ "$(arp_values)" = "$ARP_NEW" ]; then
		read -r a b c <<<"$ARP_OLD"
		sysctl -qw net.ipv4.neigh.default.gc_thresh3="$c" \
			net.ipv4.neigh.default.gc_thresh2="$b" \
			net.ipv4.neigh.default.gc_thresh1="$a" >/dev/null
	fi
	exit "$rc"
}
trap faults_cleanup EXIT

say() { echo "bench-faults: $*"; }
loud() {
	echo "bench-faults: MISMATCH: $*"
	echo "bench-faults: MISMATCH: $*" >&2
}

command -v jq >/dev/null || { echo "$ME: jq is needed" >&2; exit 2; }
case " $OPTS " in *" --json "*) ;; *) OPTS="$OPTS --json" ;; esac
# the detection time: the sender's -t (30 s unless given)
DETECT=$(echo " $OPTS " | sed -nE 's/.* (-t ?|--timeout[ =])([0-9.]+) .*/\2/p')
DETECT=${DETECT:-30}

# arp_room N: the kernel's neighbour table big enough for N hosts
arp_room() {
	local n=$1 want cur a b c
	[ "$n" -gt 32 ] || return 0
	cur=$(arp_values)
	read -r a b c <<<"$cur"
	want="$((a > n * 4 ? a : n * 4)) $((b > n * 16 ? b : n * 16)) $((c > n * 32 ? c : n * 32))"
	[ "$want" != "$cur" ] || return 0
	[ -n "$ARP_OLD" ] || ARP_OLD=$cur
	read -r a b c <<<"$want"
	sysctl -qw net.ipv4.neigh.default.gc_thresh1="$a" \
		net.ipv4.neigh.default.gc_thresh2="$b" \
		net.ipv4.neigh.default.gc_thresh3="$c" >/dev/null
	ARP_NEW=$(arp_values)
	say "ARP table (gc_thresh1..3) raised from $cur to $ARP_NEW"
}

now_us() { echo "${EPOCHREALTIME/./}"; }

# start_daemon I: host I's daemon, logging to $DATA/log/dI.log; its PID
# (ip netns exec execs it) in DPID[I]
start_daemon() {
	local i=$1
	mkdir -p "$DATA/h$i"
	: >"$DATA/log/d$i.log"
	"$CLUSTER" exec "$i" "$RDMCP" --serve --listen "${ADDR[$i]}:$PORT" \
		--prefix "$DATA/h$i" 2>>"$DATA/log/d$i.log" &
	DPID[$i]=$!
	disown	# 'cluster down' kills them; no job of ours to be announced
}

# wait_serving I...: until each daemon says it serves (30 s at most)
wait_serving() {
	local i
	for i in "$@"; do
		for _ in $(seq 1 300); do
			grep -q "serving on" "$DATA/log/d$i.log" && break
			sleep 0.1
		done
		grep -q "serving on" "$DATA/log/d$i.log" || {
			echo "$ME: host $i's daemon does not serve after 30 s:" >&2
			tail -3 "$DATA/log/d$i.log" >&2
			exit 1
		}
	done
}

# push NAME OUT: $DATA/src/NAME to /stage/ on hosts 2..N, the sender's
# JSON report in OUT; sets WALL (seconds) and PRC (its exit status)
push() {
	local t0 t1
	PRC=0
	t0=$(now_us)
	# shellcheck disable=SC2086
	if [ -z "${BENCH_FAULTS_KEEP:-}" ]; then
		timeout -k 5 "$PUSH_LIMIT" "$CLUSTER" exec 1 "$RDMCP" -P "$PORT" $OPTS \
			-d /stage/ "$DATA/src/$1" "$LIST" >"$2" 2>"$2.err" || PRC=$?
	else	# each line of stderr stamped with the seconds since t0
		timeout -k 5 "$PUSH_LIMIT" "$CLUSTER" exec 1 "$RDMCP" -P "$PORT" $OPTS \
			-d /stage/ "$DATA/src/$1" "$LIST" >"$2" \
			2> >(stamp "$t0" >"$2.err") || PRC=$?
	fi
	t1=$(now_us)
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e6 }')
}

# stamp T0: each line of stdin, after the seconds since T0 (microseconds)
# (no process per line: under the load of a push, one would make the
# stamps lag by a tenth of a second a line)
stamp() {
	local line d
	while IFS= read -r line; do
		d=$(($(now_us) - $1))
		printf '%d.%02d %s\n' $((d / 1000000)) $((d % 1000000 / 10000)) "$line"
	done
}

# summary OUT FIELD: a field of the push's summary ("NA" if none)
summary() {
	jq -r --arg f "$2" 'select(.event == "summary") | .[$f] // "NA"' "$1" \
		2>/dev/null | tail -1 | grep . || echo NA
}

# inject V SIG DELAY: once host V's daemon runs the job, DELAY seconds
# later, SIG to it; writes "SIG V SECONDS-SINCE-START" to $DATA/faults,
# or "late V" if the push ended first.  Runs in the background.
inject() {
	local v=$1 sig=$2 delay=$3 log=$DATA/log/d$1.log end left
	for _ in $(seq 1 $((EVENT_LIMIT * 20))); do
		[ ! -e "$DATA/pushed" ] || break
		grep -qE ": rank [0-9]+ of " "$log" && break
		sleep 0.05
	done
	if ! grep -qE ": rank [0-9]+ of " "$log"; then
		echo "late $v (never ran the job)" >>"$DATA/faults"
		return 0
	fi
	end=$(($(now_us) + 10#${delay/./} * 1000))	# delay has 3 decimals
	for _ in $(seq 1 $((${delay%.*} * 5 + 10))); do
		[ ! -e "$DATA/pushed" ] || break
		left=$((end - $(now_us)))
		[ "$left" -gt 0 ] || break
		sleep "$(awk -v l="$left" 'BEGIN { printf "%.3f", (l > 200000 ? 200000 : l) / 1e6 }')"
	done
	if [ -e "$DATA/pushed" ]; then
		echo "late $v" >>"$DATA/faults"
	elif kill -"$sig" "${DPID[$v]}" 2>/dev/null; then
		echo "$sig $v $(awk -v a="$T0S" -v b="$(now_us)" 'BEGIN { printf "%.2f", (b - a) / 1e6 }')" >>"$DATA/faults"
	else
		echo "late $v (its daemon was gone)" >>"$DATA/faults"
	fi
}

# settle V...: let the frozen daemons go, and wait until each has said
# what became of its job (30 s at most each)
settle() {
	local v
	for v in "$@"; do kill -CONT "${DPID[$v]}" 2>/dev/null || true; done
	for v in "$@"; do
		for _ in $(seq 1 300); do
			grep -qE "job [0-9a-f]+: (failed|complete|the sender went away|ended by|over, but|stopped)" \
				"$DATA/log/d$v.log" && break
			sleep 0.1
		done
		grep -qE "job [0-9a-f]+: (failed|complete|the sender went away|ended by|over, but|stopped)" \
			"$DATA/log/d$v.log" || say "warning: frozen host $v did not end its job 30 s after SIGCONT"
	done
}

# check_run OUT NAME KILLED: every host's report against its disk
# (KILLED: " V V " the hosts killed, which may keep temporaries); sets
# OKN, FAILN, BADN, MAYBEN and prints each mismatch loudly
check_run() {
	local out=$1 name=$2 killed=$3 host ok maybe i a file why
	declare -A rep=() may=()
	while IFS=$'\t' read -r host ok maybe; do
		rep[${host%:*}]=$ok
		may[${host%:*}]=$maybe
	done < <(jq -r 'select(.event == "replica") |
		[.host, (.ok | tostring), (.maybe_landed | tostring)] | @tsv' "$out" 2>/dev/null)
	OKN=0 FAILN=0 BADN=0 MAYBEN=0
	for i in $(seq 2 "$N"); do
		a=${ADDR[$i]}
		file=$DATA/h$i/stage/$name
		why=
		case ${rep[$a]:-missing} in
		true)
			OKN=$((OKN + 1))
			cmp -s "$DATA/src/$name" "$file" || why="reported ok, its copy differs or is missing" ;;
		false)
			FAILN=$((FAILN + 1))
			if [ -e "$file" ] || [ -L "$file" ]; then
				if [ "${may[$a]}" = true ] && cmp -s "$DATA/src/$name" "$file"; then
					MAYBEN=$((MAYBEN + 1))
				else
					why="reported failed (maybe_landed ${may[$a]}), holds the file"
				fi
			fi ;;
		*)
			why="not reported" ;;
		esac
		if [ -z "$why" ] && [[ $killed != *" $i "* ]] &&
			[ -n "$(find "$DATA/h$i" -name '.*.rdmcp-*' 2>/dev/null | head -1)" ]; then
			why="left a temporary: $(find "$DATA/h$i" -name '.*.rdmcp-*' | head -1)"
		fi
		if [ -n "$why" ]; then
			BADN=$((BADN + 1))
			loud "host $i ($a): $why; its log ends:"
			tail -4 "$DATA/log/d$i.log" | sed 's/^/    /'
		fi
	done
}

# new_file NAME: MIB MiB of random bytes, the sources before it gone
new_file() {
	rm -f "$DATA"/src/*
	head -c $((MIB << 20)) /dev/urandom >"$DATA/src/$1"
}

# forget NAME: the hosts' copies of NAME removed
forget() {
	rm -f "$DATA"/h*/stage/"$1"
}

med() { grep -v -e '^NA$' -e '^$' | median | awk '{ printf "%.4g\n", $1 }'; }
minmax() { grep -v -e '^NA$' -e '^$' | sort -g | sed -n '1p;$p' | awk '{ printf "%.4g\n", $1 }' | paste -sd' '; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA") print "NA"; else printf "%.4f\n", a / b }'; }

mkdir -p "$DATA/log" "$DATA/src"
BAD=0
EVENT_LIMIT=60	# seconds a fault waits for its victim to run the job
say "scenarios $SCENARIOS; $RUNS undisturbed pushes, $FRUNS with $NKILL killed and $NSTOP frozen; sender options '$OPTS' (detection -t $DETECT s); $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo '?')"
for s in $SCENARIOS; do
	IFS=: read -r N RATE MIB <<<"$s"
	[ $((NKILL + NSTOP)) -lt $((N - 1)) ] || { echo "$ME: $N hosts cannot lose $((NKILL + NSTOP))" >&2; exit 2; }
	SIZE=$((MIB << 20))
	say "== $N hosts at $RATE, $MIB MiB"
	arp_room "$N"
	"$CLUSTER" up "$N" "$RATE" >/dev/null
	declare -A ADDR=() DPID=()
	for i in $(seq 1 "$N"); do ADDR[$i]=$("$CLUSTER" addr "$i"); done
	LIST=$(for i in $(seq 2 "$N"); do printf '%s,' "${ADDR[$i]}"; done)
	LIST=${LIST%,}
	for i in $(seq 2 "$N"); do start_daemon "$i"; done
	wait_serving $(seq 2 "$N")

	U_WALL=() U_LAST=() U_SENT=()
	for r in $(seq 1 "$RUNS"); do
		name=u$r.bin
		new_file "$name"
		push "$name" "$DATA/u$r.json"
		check_run "$DATA/u$r.json" "$name" " "
		BAD=$((BAD + BADN))
		last=$(summary "$DATA/u$r.json" last)
		sent=$(summary "$DATA/u$r.json" sent)
		if [ "$FAILN" -ne 0 ] || [ "$OKN" -ne $((N - 1)) ]; then
			loud "undisturbed push $r: $OKN ok, $FAILN failed (exit $PRC): $(tail -2 "$DATA/u$r.json.err")"
			BAD=$((BAD + 1))
		fi
		U_WALL+=("$WALL") U_LAST+=("$last")
		U_SENT+=("$(ratio "$sent" "$SIZE")")
		say "undisturbed $r: wall $WALL s, last replica $last s, sent/file ${U_SENT[-1]}, $OKN ok, exit $PRC"
		forget "$name"
	done
	uwall=$(printf '%s\n' "${U_WALL[@]}" | med)
	ulast=$(printf '%s\n' "${U_LAST[@]}" | med)
	usent=$(printf '%s\n' "${U_SENT[@]}" | med)
	if [ -z "$uwall" ] || [ -z "$ulast" ]; then
		echo "$ME: no undisturbed push succeeded" >&2
		exit 1
	fi
	WITHIN=$(awk -v l="$ulast" 'BEGIN { printf "%.3f", 0.9 * l }')

	F_WALL=() F_SENT=() F_ATT=() GOOD=0 FULL=0
	for r in $(seq 1 "$FRUNS"); do
		name=f$r.bin
		new_file "$name"
		for i in $(seq 2 "$N"); do : >"$DATA/log/d$i.log"; done
		rm -f "$DATA/pushed"
		: >"$DATA/faults"
		mapfile -t VICTIMS < <(seq 2 "$N" | shuf -n $((NKILL + NSTOP)))
		INJ=()
		T0S=$(now_us)	# the injectors' clock starts a little before the push's
		k=0
		for v in "${VICTIMS[@]}"; do
			sig=KILL
			[ "$k" -lt "$NKILL" ] || sig=STOP
			delay=$(awk -v s="$RANDOM$k" -v w="$WITHIN" 'BEGIN { srand(s); printf "%.3f", rand() * w }')
			inject "$v" "$sig" "$delay" &
			INJ+=($!)
			k=$((k + 1))
		done
		push "$name" "$DATA/f$r.json"
		touch "$DATA/pushed"
		for p in "${INJ[@]}"; do	# each ends within 0.25 s of "pushed"
			timeout 10 tail --pid="$p" -f /dev/null || kill -KILL "$p" 2>/dev/null || true
		done
		wait "${INJ[@]}" 2>/dev/null || true
		INJ=()
		killed=" " stopped=() faults="" late=0
		while read -r what v at; do
			case $what in
			KILL) killed="$killed$v " faults="$faults kill h$v@${at}s" ;;
			STOP) stopped+=("$v") faults="$faults stop h$v@${at}s" ;;
			*) late=$((late + 1)) faults="$faults late:h$v" ;;
			esac
		done <"$DATA/faults"
		settle "${stopped[@]}"
		check_run "$DATA/f$r.json" "$name" "$killed"
		BAD=$((BAD + BADN))
		[ "$BADN" -ne 0 ] || GOOD=$((GOOD + 1))
		if [ "$late" -eq 0 ]; then
			FULL=$((FULL + 1))
		else
			say "run $r: $late of $((NKILL + NSTOP)) faults came after the push ended"
			BAD=$((BAD + 1))
		fi
		sent=$(summary "$DATA/f$r.json" sent)
		resumed=$(summary "$DATA/f$r.json" resumed)
		att=$(summary "$DATA/f$r.json" attempts)
		F_WALL+=("$WALL") F_ATT+=("$att")
		F_SENT+=("$(ratio "$sent" "$SIZE")")
		if [ -n "${BENCH_FAULTS_KEEP:-}" ]; then
			mkdir -p "$BENCH_FAULTS_KEEP"
			cp "$DATA/f$r.json" "$BENCH_FAULTS_KEEP/r$r.json"
			cp "$DATA/f$r.json.err" "$BENCH_FAULTS_KEEP/r$r.err"
			cp "$DATA/faults" "$BENCH_FAULTS_KEEP/r$r.faults"
		fi
		say "faults $r: wall $WALL s, sent/file ${F_SENT[-1]} (what hosts held already, summed over them: $(ratio "$resumed" "$SIZE") x the file), attempts $att, ok $OKN, failed $FAILN (maybe landed $MAYBEN), exit $PRC;$faults; report vs disk: $BADN mismatches"
		# the copies go; the killed daemons come back, as a service
		# manager would start them (their temporaries swept at start)
		forget "$name"
		for v in $killed; do start_daemon "$v"; done
		# shellcheck disable=SC2086
		wait_serving $killed
	done
	"$CLUSTER" down

	fmed=$(printf '%s\n' "${F_WALL[@]}" | med)
	read -r fmin fmax < <(printf '%s\n' "${F_WALL[@]}" | minmax)
	smed=$(printf '%s\n' "${F_SENT[@]}" | med)
	read -r _ smax < <(printf '%s\n' "${F_SENT[@]}" | minmax)
	amed=$(printf '%s\n' "${F_ATT[@]}" | med)
	read -r _ amax < <(printf '%s\n' "${F_ATT[@]}" | minmax)
	echo
	printf '%s hosts, %s, %s MiB; %s killed, %s frozen; %s\n' "$N" "$RATE" "$MIB" "$NKILL" "$NSTOP" "$OPTS"
	printf '  %-44s %s\n' \
		"undisturbed, median of $RUNS: wall" "$uwall s (last replica $ulast s, sent/file $usent)" \
		"with faults, $FRUNS runs: wall median" "$fmed s (min $fmin, max $fmax)" \
		"(median - detection $DETECT s) / undisturbed" "$(awk -v f="$fmed" -v d="$DETECT" -v u="$uwall" 'BEGIN { printf "%.3f", (f - d) / u }') (goal <= 1.5)" \
		"sent/file" "median $smed, max $smax (goal <= 1.3)" \
		"attempts" "median $amed, max $amax" \
		"runs with report = disk" "$GOOD of $FRUNS" \
		"runs with every fault injected" "$FULL of $FRUNS"
	echo
	unset ADDR DPID
done
[ "$BAD" -eq 0 ] || say "FAILED: $BAD mismatches or faults not injected"
[ "$BAD" -eq 0 ]
