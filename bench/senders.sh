#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/senders.sh - many pushes at once, from different senders, to
# overlapping groups of hosts (what 'make bench-senders' runs; root:
# network namespaces).
#
# For each scenario S:N:RATE:MIB:G builds S + N hosts whose NICs run at
# RATE both ways (scripts/netns-cluster.sh): hosts 1..S are senders, each
# with its own MIB MiB file, hosts S+1..S+N run daemons.  Sender i pushes
# to G of the N hosts, starting at host S+1 + i*N/S and wrapping around, so
# with G > N/S the groups overlap.  All S pushes start at once; in RUNS
# rounds, for the default schedule and for -a chain, it measures each
# push's time to its last replica, and from them:
#   spread     (slowest - fastest) / fastest push
#   aggregate  the time the busiest links need for what they must carry
#              (the host in most groups receives MIB MiB per group at
#              RATE) over the time the last push ended: 100 % is the
#              physical limit
#   retrans    TCP segments retransmitted by all hosts during the round
# and the same for the pushes one after another (sequential) as the
# baseline of a tool that serialises them.  Every replica must end ok.
#
# Settings (environment): BENCH_SENDERS_SCENARIOS ("4:16:200mbit:64:12
# 4:12:200mbit:64:12"), BENCH_RUNS (3), BENCH_OPTS (extra options of every
# rdmcp run), BENCH_PORT (7471).  Needs root.
set -euo pipefail

SCENARIOS=${BENCH_SENDERS_SCENARIOS:-4:16:200mbit:64:12 4:12:200mbit:64:12}
RUNS=${BENCH_RUNS:-3}
OPTS=${BENCH_OPTS:-}
DATA=/dev/shm/rdmcp-bench-senders.$$
export RDMCP_NS=rdmcpsnd
# shellcheck source-path=SCRIPTDIR source=lib.bash
. "$(dirname "$0")/lib.bash"
for s in $SCENARIOS; do
	if ! [[ $s =~ ^([1-9][0-9]*):([1-9][0-9]*):([0-9]+[a-z]+):([1-9][0-9]*):([1-9][0-9]*)$ ]] ||
		[ "${BASH_REMATCH[5]}" -gt "${BASH_REMATCH[2]}" ] ||
		[ $((BASH_REMATCH[1] + BASH_REMATCH[2])) -gt 250 ]; then
		echo "bench/senders.sh: '$s' is not S:N:RATE:MIB:G (G <= N, S + N <= 250)" >&2
		exit 2
	fi
done

# group I: the hosts sender I (0-based) pushes to
group() {
	local i=$1 j list=""
	for j in $(seq 0 $((G - 1))); do
		list="$list${list:+,}$("$CLUSTER" addr $((S + 1 + (i * N / S + j) % N)))"
	done
	echo "$list"
}

# most_groups: how many groups the busiest host is in
most_groups() {
	local i j c=()
	for i in $(seq 0 $((N - 1))); do c[i]=0; done
	for i in $(seq 0 $((S - 1))); do
		for j in $(seq 0 $((G - 1))); do
			c[(i * N / S + j) % N]=$((c[(i * N / S + j) % N] + 1))
		done
	done
	printf '%s\n' "${c[@]}" | sort -n | tail -1
}

retrans() {
	local i
	for i in $(seq 1 $((S + N))); do
		"$CLUSTER" exec "$i" cat /proc/net/snmp
	done | awk '$1 == "Tcp:" { if ($2 == "RtoAlgorithm") { for (f = 2; f <= NF; f++) if ($f == "RetransSegs") col = f; next } sum += $col }
		END { print sum + 0 }'
}

# push I [OPTIONS]: sender I's push; prints its seconds, or NA
push() {
	local i=$1 out
	shift
	# shellcheck disable=SC2086
	out=$(timeout -k 5 600 "$CLUSTER" exec $((i + 1)) "$RDMCP" --json -P "$PORT" \
		"$@" $OPTS -d "/dst$i/" "$DATA/file$i" "$(group "$i")" 2>>"$DATA/err$i") || true
	echo "$out" | jq -rs '[.[] | select(.event == "replica")] as $r
		| if ($r | length) == 0 or ($r | any(.ok | not)) then "NA"
		  else ($r | map(.seconds) | max) end'
}

# round MODE [OPTIONS]: every push at once (MODE all) or one after the
# other (seq); prints "T1 .. TS LAST RETRANS"
round() {
	local mode=$1 i pids=() t=() r0 t0 t1
	shift
	rm -rf "$DATA"/h*/dst*
	r0=$(retrans)
	t0=$(date +%s.%N)
	for i in $(seq 0 $((S - 1))); do
		if [ "$mode" = all ]; then
			push "$i" "$@" >"$DATA/t$i" &
			pids+=($!)
		else
			push "$i" "$@" >"$DATA/t$i"
		fi
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	t1=$(date +%s.%N)
	for i in $(seq 0 $((S - 1))); do
		t+=("$(cat "$DATA/t$i")")
	done
	if [[ " ${t[*]} " == *" NA "* ]]; then
		echo "${t[*]} NA $(($(retrans) - r0))"
	elif [ "$mode" = all ]; then
		echo "${t[*]} $(printf '%s\n' "${t[@]}" | sort -n | tail -1) $(($(retrans) - r0))"
	else
		echo "${t[*]} $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(($(retrans) - r0))"
	fi
	rm -rf "$DATA"/h*/dst*
}

# count_slow MODE: add the pushes of the round just run that stopped
# around slow hosts to DATA/slow.MODE
count_slow() {
	local n=0
	[ -f "$DATA/slow.$1" ] && n=$(cat "$DATA/slow.$1")
	n=$((n + $(cat "$DATA"/err* 2>/dev/null | grep -c '^rdmcp: slow:' || true)))
	echo "$n" >"$DATA/slow.$1"
	rm -f "$DATA"/err*
}

scenario() {
	local r limit
	IFS=: read -r S N rate mib G <<<"$1"
	limit=$(awk -v c="$(most_groups)" -v b=$((mib << 23)) -v r="$(bits_per_s "$rate")" \
		'BEGIN { printf "%.3f", c * b / r }')
	echo "== $S senders, $N hosts at $rate, $mib MiB each to $G hosts (busiest host in $(most_groups) groups: its link needs $limit s); $RUNS runs"
	"$CLUSTER" up $((S + N)) "$rate" >/dev/null
	# daemons on hosts S+1..S+N: start_daemons serves 2..N, so shift
	for r in $(seq $((S + 1)) $((S + N))); do
		mkdir -p "$DATA/h$r"
		"$CLUSTER" exec "$r" "$RDMCP" --serve -q --listen "$("$CLUSTER" addr "$r"):$PORT" \
			--prefix "$DATA/h$r" &
		disown
	done
	sleep 1
	for r in $(seq 0 $((S - 1))); do
		head -c $((mib << 20)) /dev/urandom >"$DATA/file$r"
	done
	: >"$DATA/results"
	for r in $(seq 1 "$RUNS"); do
		{
			echo "default $(round all)"
			count_slow default
			echo "chain $(round all -a chain)"
			count_slow chain
			echo "sequential $(round seq)"
			count_slow sequential
		} >>"$DATA/results"
		printf '.' >&2
	done
	echo >&2
	"$CLUSTER" down
	echo "   pushes stopped to send again around slow hosts (--slow last), of $((RUNS * S)) each:" \
		"default $(cat "$DATA/slow.default"), chain $(cat "$DATA/slow.chain"), sequential $(cat "$DATA/slow.sequential")"
	rm -f "$DATA"/slow.*
	awk -v S="$S" -v limit="$limit" '
	function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	{ m = $1; last = $(S + 2); rt = $(S + 3)
	  if (last == "NA") { na[m]++; next }
	  lo = $2; hi = $2; for (i = 3; i <= S + 1; i++) { if ($i < lo) lo = $i; if ($i > hi) hi = $i }
	  n[m]++; L[m, n[m]] = last; SP[m, n[m]] = (hi - lo) / lo; R[m, n[m]] = rt; order[m] = order[m] ? order[m] : ++k; name[k] = m }
	END {
		for (j = 1; j <= k; j++) { m = name[j]; c = n[m]
			for (i = 1; i <= c; i++) { a[i] = L[m, i]; b[i] = SP[m, i]; d[i] = R[m, i] }
			l = med(a, c); s = med(b, c); r = med(d, c)
			printf "   %-10s last %7.3f s   spread %7s   aggregate %5.1f %% of the limit   retrans %d%s\n",
				m, l, (m == "sequential" ? "-" : sprintf("%5.1f %%", 100 * s)), 100 * limit / l, r,
				na[m] ? sprintf("   (%d runs failed)", na[m]) : ""
		}
	}' "$DATA/results"
}

echo "rdmcp bench-senders: $SCENARIOS; $RUNS runs each, medians; load:$(uptime | sed 's/.*load average://')"
for s in $SCENARIOS; do
	scenario "$s"
done
