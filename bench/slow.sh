#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/slow.sh - rdmcp when some hosts are slower than the rest (what
# 'make bench-slow' runs; root: network namespaces).
#
# For each scenario N:RATE:MIB:K@SLOW, builds N hosts whose NICs run at
# RATE both ways (scripts/netns-cluster.sh), starts daemons on hosts
# 2..N, makes a file of MIB MiB on host 1, and in RUNS rounds measures:
#   uniform        rdmcp (default options) to hosts 2..N, every NIC at
#                  RATE: the time the healthy hosts should keep to
# then shapes K hosts' NICs to SLOW, spread over the list (8 hosts, 1
# slow: host 5; 16 hosts, 4 slow: hosts 3, 7, 11, 15), and measures, in
# RUNS rounds:
#   default        rdmcp, default options, hosts in order: it must find
#                  the slow hosts itself (--slow last)
#   wait           rdmcp --slow wait: the group at the slowest one's pace
#   chain          rdmcp -a chain with the slow hosts listed last (what a
#                  user who knows them can do by hand)
#   tcpchain       the plain pipelined TCP chain, slow hosts at the tail
# For rdmcp, "healthy" is the time of the last replica among the hosts at
# RATE and "slow" that of the last slow host (from --json); tcpchain only
# tells when its last host (a slow one) acknowledged.  Prints medians, the
# healthy hosts' time over the uniform time, and the slow hosts' time over
# the time their own link needs for the file (MIB MiB at SLOW).
#
# The links pass no burst faster than their rate beyond 32 KiB (tbf bucket
# 32 KiB, GSO packets of at most 16 KiB; BENCH_SLOW_BURST, BENCH_SLOW_GSO):
# rdmcp finds slow hosts by the time blocks take to come in, and the
# 256 KiB bucket of the other benchmarks would let an idle link pass two
# blocks at memory speed, which no NIC does.
#
# Settings (environment): BENCH_SLOW_SCENARIOS ("8:200mbit:64:1@50mbit
# 16:200mbit:64:1@50mbit"), BENCH_RUNS (3), BENCH_OPTS (extra options of
# every rdmcp run), BENCH_PORT (7471; +1 for tcpchain).  Needs root.
set -euo pipefail

SCENARIOS=${BENCH_SLOW_SCENARIOS:-8:200mbit:64:1@50mbit 16:200mbit:64:1@50mbit}
RUNS=${BENCH_RUNS:-3}
OPTS=${BENCH_OPTS:-}
DATA=/dev/shm/rdmcp-bench-slow.$$
export RDMCP_NS=rdmcpslow
export RDMCP_NS_BURST=${BENCH_SLOW_BURST:-32kb}
export RDMCP_NS_GSO=${BENCH_SLOW_GSO:-16384}
# shellcheck source-path=SCRIPTDIR source=lib.bash
. "$(dirname "$0")/lib.bash"
CPORT=$((PORT + 1))
TCPCHAIN=$TOP/build/tests/tcpchain
[ -x "$TCPCHAIN" ] || { echo "bench/slow.sh: run 'make bench-slow'" >&2; exit 2; }
for s in $SCENARIOS; do
	if ! [[ $s =~ ^([0-9]+):([0-9]+[a-z]+):([1-9][0-9]*):([1-9][0-9]*)@([0-9]+[a-z]+)$ ]] ||
		[ "${BASH_REMATCH[1]}" -lt 3 ] || [ "${BASH_REMATCH[4]}" -ge $((BASH_REMATCH[1] - 1)) ]; then
		echo "bench/slow.sh: '$s' is not N:RATE:MIB:K@SLOW (N >= 3, K < N - 1)" >&2
		exit 2
	fi
done

# rdmcp_run LIST SLOW_ADDRS [OPTIONS]: "HEALTHY SLOW" seconds (NA NA if
# a replica failed) of a push to the hosts of LIST; SLOW_ADDRS (spaces)
# are the slow ones
rdmcp_run() {
	local list=$1 slow=$2 out
	shift 2
	rm -rf "$DATA"/h*/dst
	# shellcheck disable=SC2086
	out=$(timeout -k 5 600 "$CLUSTER" exec 1 "$RDMCP" --json -P "$PORT" \
		"$@" $OPTS -d /dst/ "$DATA/file" "$list" 2>>"$DATA/err") || true
	rm -rf "$DATA"/h*/dst
	echo "$out" | jq -rs --arg slow "$slow" '
		def slow: (.address | split(":")[0]) as $a
			| ($slow | split(" ") | index($a)) != null;
		[.[] | select(.event == "replica")] as $r
		| if ($r | length) == 0 or ($r | any(.ok | not)) then "NA NA"
		  else "\([$r[] | select(slow | not) | .seconds] | max) \([$r[] | select(slow) | .seconds] | max)"
		  end'
}

# tcpchain_run HOST...: seconds until the chain's last host acknowledged;
# the chain goes from host 1 through the hosts in the order given
tcpchain_run() {
	local hosts=("$@") i t pids=() args
	for i in $(seq $((${#hosts[@]} - 1)) -1 0); do
		args=(relay -t 600 "$CPORT" "$DATA/h${hosts[i]}/chain.out")
		[ "$i" -lt $((${#hosts[@]} - 1)) ] &&
			args+=("$("$CLUSTER" addr "${hosts[i + 1]}")" "$CPORT")
		"$CLUSTER" exec "${hosts[i]}" "$TCPCHAIN" "${args[@]}" &
		pids+=($!)
	done
	# no wait: a relay listens once connected downstream, and the head
	# retries its connect until the whole chain is up
	t=$("$CLUSTER" exec 1 "$TCPCHAIN" send -t 600 "$("$CLUSTER" addr "${hosts[0]}")" "$CPORT" "$DATA/file") || t=NA
	for i in "${pids[@]}"; do
		wait "$i" || t=NA
	done
	rm -f "$DATA"/h*/chain.out
	echo "$t"
}

# slow_hosts N K: K hosts of 2..N spread over the list
slow_hosts() {
	local n=$1 k=$2 j
	for j in $(seq 0 $((k - 1))); do
		echo $((2 + (2 * j + 1) * (n - 1) / (2 * k)))
	done
}

# med: the median of the numbers on standard input (one line, spaces),
# NA when every run failed
med() {
	local v
	v=$(tr ' ' '\n' | grep -Ev '^(NA)?$' || true)
	if [ -n "$v" ]; then echo "$v" | median; else echo NA; fi
}

# addrs HOST...: their addresses, as one comma-separated list
addrs() {
	local i list=""
	for i in "$@"; do list="$list${list:+,}$("$CLUSTER" addr "$i")"; done
	echo "$list"
}

scenario() {
	local n rate mib k slow r h s u=() dh=() ds=() wh=() ws=() ch=() cs=() tc=()
	local own slows=() fast=() sa fp
	IFS=: read -r n rate mib k <<<"$1"
	slow=${k#*@}
	k=${k%@*}
	mapfile -t slows < <(slow_hosts "$n" "$k")
	for r in $(seq 2 "$n"); do
		[[ " ${slows[*]} " == *" $r "* ]] || fast+=("$r")
	done
	sa=$(addrs "${slows[@]}" | tr , ' ')
	echo "== $n hosts at $rate, $k at $slow (host ${slows[*]}), $mib MiB, $RUNS runs"
	"$CLUSTER" up "$n" "$rate" >/dev/null
	start_daemons "$n"
	head -c $((mib << 20)) /dev/urandom >"$DATA/file"
	for r in $(seq 1 "$RUNS"); do
		read -r h _ < <(rdmcp_run "$(hostlist "$n")" "")
		u+=("$h")
		printf '.' >&2
	done
	fp=$(grep -c "^rdmcp: slow:" "$DATA/err" || true)
	: >"$DATA/err"
	for r in "${slows[@]}"; do
		"$CLUSTER" shape "$r" "$slow"
	done
	for r in $(seq 1 "$RUNS"); do
		read -r h s < <(rdmcp_run "$(hostlist "$n")" "$sa")
		dh+=("$h") ds+=("$s")
		read -r h s < <(rdmcp_run "$(hostlist "$n")" "$sa" --slow wait)
		wh+=("$h") ws+=("$s")
		read -r h s < <(rdmcp_run "$(addrs "${fast[@]}" "${slows[@]}")" "$sa" -a chain)
		ch+=("$h") cs+=("$s")
		tc+=("$(tcpchain_run "${fast[@]}" "${slows[@]}")")
		printf '.' >&2
	done
	echo >&2
	"$CLUSTER" down
	own=$(awk -v b=$((mib << 23)) -v r="$(bits_per_s "$slow")" 'BEGIN { printf "%.3f", b / r }')
	awk -v u="$(echo "${u[*]}" | med)" -v dh="$(echo "${dh[*]}" | med)" \
		-v ds="$(echo "${ds[*]}" | med)" -v wh="$(echo "${wh[*]}" | med)" \
		-v ws="$(echo "${ws[*]}" | med)" -v ch="$(echo "${ch[*]}" | med)" \
		-v cs="$(echo "${cs[*]}" | med)" -v tc="$(echo "${tc[*]}" | med)" \
		-v own="$own" 'function r(a, b) { return (a == "NA" || b == "NA" || b == 0) ? "NA" : sprintf("%.2f", a / b) }
	function t(a) { return a == "NA" ? "     NA" : sprintf("%7.3f", a) }
	function row(name, h, s) { printf "   %-10s healthy %s s (%s x uniform)   slow %s s (%s x its own link, %s s)\n", name, t(h), r(h, u), t(s), r(s, own), own }
	BEGIN {
		printf "   uniform (every NIC at the full rate)   %s s\n", t(u)
		row("default", dh, ds)
		row("slow-wait", wh, ws)
		row("chain", ch, cs)
		printf "   %-10s last    %s s                      (%s x its own link)\n", "tcpchain", t(tc), r(tc, own)
	}'
	echo "   hosts found slow: in $(grep -c "^rdmcp: slow:" "$DATA/err" || true) of $RUNS default runs" \
		"(and in $fp of the uniform runs), each run's finding:"
	grep "^rdmcp: slow:" "$DATA/err" | sed 's/^/     /' || true
	: >"$DATA/err"
}

echo "rdmcp bench-slow: $SCENARIOS; $RUNS runs each, medians; load:$(uptime | sed 's/.*load average://')"
for s in $SCENARIOS; do
	scenario "$s"
done
