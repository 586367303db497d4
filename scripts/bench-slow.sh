#!/usr/bin/env bash
# bench-slow.sh - rdmcp when some hosts are slower than the rest (what
# 'make bench-slow' runs; root: network namespaces).
#
# For each scenario N:RATE:MIB:K@SLOW, builds N hosts whose NICs run at
# RATE both ways (scripts/netns-cluster.sh), starts daemons on hosts
# 2..N, makes a file of MIB MiB on host 1, and in RUNS rounds measures:
#   uniform        rdmcp (default options) to hosts 2..N, every NIC at
#                  RATE: the time the healthy hosts should keep to
# then shapes the last K hosts' NICs to SLOW and measures, in RUNS rounds:
#   default        rdmcp, default options
#   chain          rdmcp -a chain (the slow hosts last in the list, so at
#                  the chain's tail)
#   tcpchain       the plain pipelined TCP chain, slow hosts at the tail
# For rdmcp, "healthy" is the time of the last replica among the hosts at
# RATE and "slow" that of the last slow host (from --json); tcpchain only
# tells when its last host (a slow one) acknowledged.  Prints medians, the
# healthy hosts' time over the uniform time, and the slow hosts' time over
# the time their own link needs for the file (MIB MiB at SLOW).
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
# shellcheck source-path=SCRIPTDIR source=bench-lib.bash
. "$(dirname "$0")/bench-lib.bash"
CPORT=$((PORT + 1))
TCPCHAIN=$TOP/build/tests/tcpchain
[ -x "$TCPCHAIN" ] || { echo "bench-slow.sh: run 'make bench-slow'" >&2; exit 2; }
for s in $SCENARIOS; do
	if ! [[ $s =~ ^([0-9]+):([0-9]+[a-z]+):([1-9][0-9]*):([1-9][0-9]*)@([0-9]+[a-z]+)$ ]] ||
		[ "${BASH_REMATCH[1]}" -lt 3 ] || [ "${BASH_REMATCH[4]}" -ge $((BASH_REMATCH[1] - 1)) ]; then
		echo "bench-slow.sh: '$s' is not N:RATE:MIB:K@SLOW (N >= 3, K < N - 1)" >&2
		exit 2
	fi
done

# rdmcp_run N FIRST_SLOW [OPTIONS]: "HEALTHY SLOW" seconds (NA NA if a
# replica failed); hosts FIRST_SLOW..N are the slow ones
rdmcp_run() {
	local n=$1 first=$2 out
	shift 2
	rm -rf "$DATA"/h*/dst
	# shellcheck disable=SC2086
	out=$(timeout -k 5 600 "$CLUSTER" exec 1 "$RDMCP" --json -P "$PORT" \
		"$@" $OPTS -d /dst/ "$DATA/file" "$(hostlist "$n")" 2>/dev/null) || true
	rm -rf "$DATA"/h*/dst
	echo "$out" | jq -rs --arg first "$("$CLUSTER" addr "$first")" '
		def slow: (.address | split(":")[0] | split(".") | map(tonumber)) as $a
			| ($first | split(".") | map(tonumber)) as $f
			| ($a[2] * 256 + $a[3]) >= ($f[2] * 256 + $f[3]);
		[.[] | select(.event == "replica")] as $r
		| if ($r | length) == 0 or ($r | any(.ok | not)) then "NA NA"
		  else "\([$r[] | select(slow | not) | .seconds] | max) \([$r[] | select(slow) | .seconds] | max)"
		  end'
}

# tcpchain_run N: seconds until the chain's last host acknowledged
tcpchain_run() {
	local n=$1 i t pids=() args
	for i in $(seq "$n" -1 2); do
		args=(relay -t 600 "$CPORT" "$DATA/h$i/chain.out")
		[ "$i" -lt "$n" ] && args+=("$("$CLUSTER" addr $((i + 1)))" "$CPORT")
		"$CLUSTER" exec "$i" "$TCPCHAIN" "${args[@]}" &
		pids+=($!)
	done
	# no wait: a relay listens once connected downstream, and the head
	# retries its connect until the whole chain is up
	t=$("$CLUSTER" exec 1 "$TCPCHAIN" send -t 600 "$("$CLUSTER" addr 2)" "$CPORT" "$DATA/file") || t=NA
	for i in "${pids[@]}"; do
		wait "$i" || t=NA
	done
	rm -f "$DATA"/h*/chain.out
	echo "$t"
}

# med: the median of the numbers on standard input (one line, spaces),
# NA when every run failed
med() {
	local v
	v=$(tr ' ' '\n' | grep -Ev '^(NA)?$' || true)
	if [ -n "$v" ]; then echo "$v" | median; else echo NA; fi
}

scenario() {
	local n rate mib k slow first r u=() dh=() ds=() ch=() cs=() tc=() own
	IFS=: read -r n rate mib k <<<"$1"
	slow=${k#*@}
	k=${k%@*}
	first=$((n - k + 1))
	echo "== $n hosts at $rate, the last $k at $slow, $mib MiB, $RUNS runs"
	"$CLUSTER" up "$n" "$rate" >/dev/null
	start_daemons "$n"
	head -c $((mib << 20)) /dev/urandom >"$DATA/file"
	for r in $(seq 1 "$RUNS"); do
		read -r h _ < <(rdmcp_run "$n" "$first")
		u+=("$h")
		printf '.' >&2
	done
	for r in $(seq "$first" "$n"); do
		"$CLUSTER" shape "$r" "$slow"
	done
	for r in $(seq 1 "$RUNS"); do
		read -r h s < <(rdmcp_run "$n" "$first")
		dh+=("$h") ds+=("$s")
		read -r h s < <(rdmcp_run "$n" "$first" -a chain)
		ch+=("$h") cs+=("$s")
		tc+=("$(tcpchain_run "$n")")
		printf '.' >&2
	done
	echo >&2
	"$CLUSTER" down
	own=$(awk -v b=$((mib << 23)) -v r="$(bits_per_s "$slow")" 'BEGIN { printf "%.3f", b / r }')
	awk -v u="$(echo "${u[*]}" | med)" -v dh="$(echo "${dh[*]}" | med)" \
		-v ds="$(echo "${ds[*]}" | med)" -v ch="$(echo "${ch[*]}" | med)" \
		-v cs="$(echo "${cs[*]}" | med)" -v tc="$(echo "${tc[*]}" | med)" \
		-v own="$own" 'function r(a, b) { return (a == "NA" || b == "NA" || b == 0) ? "NA" : sprintf("%.2f", a / b) }
	function t(a) { return a == "NA" ? "     NA" : sprintf("%7.3f", a) }
	BEGIN {
		printf "   uniform (every NIC at the full rate)   %s s\n", t(u)
		printf "   %-10s healthy %s s (%s x uniform)   slow %s s (%s x its own link, %s s)\n", "default", t(dh), r(dh, u), t(ds), r(ds, own), own
		printf "   %-10s healthy %s s (%s x uniform)   slow %s s (%s x its own link)\n", "chain", t(ch), r(ch, u), t(cs), r(cs, own)
		printf "   %-10s last    %s s                      (%s x its own link)\n", "tcpchain", t(tc), r(tc, own)
	}'
}

echo "rdmcp bench-slow: $SCENARIOS; $RUNS runs each, medians; load:$(uptime | sed 's/.*load average://')"
for s in $SCENARIOS; do
	scenario "$s"
done
