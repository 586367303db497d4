#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cluster.sh - rdmcp on an emulated cluster, against the physical limit and
# against what a user would pick instead.
#
# For each scenario N:RATE:MIB, builds N network-namespace hosts whose NICs
# are shaped to RATE in both directions (scripts/netns-cluster.sh), starts
# daemons on hosts 2..N, makes a file of MIB MiB on host 1 and measures,
# in RUNS rounds that each run every column once in turn:
#   tcpcopy      one plain TCP copy from host 1 to host 2 (sendfile, no
#                rdmcp; tests/helpers/tcpcopy): the physical limit, what
#                every ratio divides by
#   rdmcp-1to1   rdmcp to host 2 alone, default options (its fixed costs)
#   default      rdmcp to hosts 2..N with the default options (no -a, no
#                -b): this column follows the defaults as they change
#   ALG-BLOCK    rdmcp -a ALG -b BLOCK to hosts 2..N, for each ALG and
#                each BLOCK
#   tcpchain     the pipelined chain 1 -> 2 -> .. -> N a user would write,
#                each host writing and forwarding at once
#                (tests/helpers/tcpchain)
# Times run to the last complete replica: rdmcp's "last" (--json);
# tcpcopy and tcpchain from the connect until the last host acknowledged.
# For every run it also records the TCP retransmissions summed over all N
# hosts, the bytes host 1's eth0 sent (headers included) over the file
# size: the sender's upload, about 1 for rdmcp and the chains; the packets
# the links dropped (the tbf queues of every NIC, both ways: incast shows
# here); and the DSACKs the hosts received, each a retransmission that
# proved needless (a tail loss probe fired while the segment waited in a
# queue, not lost).
#
# Prints, per scenario, the medians of the runs and their ratio to
# tcpcopy, then a summary of all scenarios; writes one line per run to the
# TSV BENCH_OUT (scenario, n, rate, mib, tool, run, seconds, ratio,
# retrans, upload, drops, dsack; '#' lines say when and what) and, with gnuplot, plots
# ratio against N to BENCH_PLOT (bench/plot.sh TSV PNG redraws
# it).  'cluster.sh --table TSV' prints the summary of an earlier run.
#
# Settings (environment):
#   BENCH_SCENARIOS  N:RATE:MIB ... ("4:200mbit:128 8:200mbit:128
#                    16:200mbit:128 32:100mbit:64 64:50mbit:32": 12 to 15
#                    minutes on 2 cores, estimated from single runs; 64
#                    hosts at 200mbit would need 12.8 Gbit/s of emulation,
#                    more than 2 cores can do)
#   BENCH_RUNS (3)   BENCH_ALGS ("binomial chain"; also: tree sequential)
#   BENCH_BLOCK (128K; a list sweeps sizes)   BENCH_OPTS (extra options of every rdmcp run)
#   BENCH_ONE (1; 0 leaves out rdmcp-1to1)   BENCH_TIMEOUT (600 s a run)
#   BENCH_OUT (/tmp/rdmcp-bench-DATE/bench.tsv)
#   BENCH_TRACE (a directory: every rdmcp run writes its timeline there,
#                --trace SCENARIO-TOOL-RUN.json; default none)
#   BENCH_PLOT (bench-ratio.png next to BENCH_OUT; '' for none)
#   BENCH_PORT (7471: the daemons; +1: tcpcopy and tcpchain)
#   RDMCP_NS_CC (every host's TCP congestion control, e.g. cubic; default
#   the machine's), RDMCP_NS_BURST (the NICs' tbf bucket, 256kb)
#   BENCH_SIZES, BENCH_RATE, BENCH_MIB (the old settings: when given and
#   BENCH_SCENARIOS is not, one scenario per size)
# Needs root.
set -euo pipefail

# The awk functions the reports share: median() (bench/median.awk); the
# TSV's records grouped by scenario and tool.
# shellcheck disable=SC2016 # awk's $, not the shell's
AWK_LIB="$(cat "$(dirname "$0")/median.awk")"'
/^#/ { next }
{
	if (!($1 in seen)) { seen[$1] = 1; sc[++nsc] = $1; n[$1] = $2; rate[$1] = $3; mib[$1] = $4 }
	if (!($5 in tseen)) { tseen[$5] = 1; tool[++ntool] = $5 }
	k = $1 SUBSEP $5
	if ($7 == "NA") { fails[k]++; next }
	sec[k] = sec[k] " " $7; ratio[k] = ratio[k] " " $8
	retr[k] = retr[k] " " $9; up[k] = up[k] " " $10
	if (NF >= 12) { drop[k] = drop[k] " " $11; dsack[k] = dsack[k] " " $12 }
}
'

# block TSV: one scenario, a line per tool (medians of its runs)
block() {
	awk -F '\t' "$AWK_LIB"'
	END {
		printf "   %-16s %8s %7s %8s %7s %6s %6s\n", "tool", "seconds", "ratio",
			"retrans", "upload", "drops", "dsack"
		for (t = 1; t <= ntool; t++) {
			k = sc[1] SUBSEP tool[t]
			if (k in sec)
				printf "   %-16s %8.2f %7.3f %8d %7.3f %6s %6s", tool[t], median(sec[k]),
					median(ratio[k]), median(retr[k]), median(up[k]),
					median(drop[k]), median(dsack[k])
			else
				printf "   %-16s %8s", tool[t], "failed"
			printf "%s\n", fails[k] ? "  (" fails[k] " failed runs left out)" : ""
		}
	}' "$1"
}

# tables TSV: the summary of a run, three tables with a column per tool
tables() {
	awk -F '\t' "$AWK_LIB"'
	function table(title, what,    s, t, k, v) {
		printf "\n%s\n%-4s %-9s %5s", title, "N", "rate", "MiB"
		for (t = 1; t <= ntool; t++)
			printf " %14s", tool[t]
		printf "\n"
		for (s = 1; s <= nsc; s++) {
			printf "%-4s %-9s %5s", n[sc[s]], rate[sc[s]], mib[sc[s]]
			for (t = 1; t <= ntool; t++) {
				k = sc[s] SUBSEP tool[t]
				if (!(k in sec))
					v = "-"
				else if (what == "ratio" && tool[t] == "tcpcopy")
					v = sprintf("%.2fs", median(sec[k]))
				else if (what == "ratio")
					v = sprintf("%.3f", median(ratio[k]))
				else if (what == "retrans")
					v = sprintf("%d", median(retr[k]))
				else if (what == "drops")
					v = median(drop[k])
				else if (what == "dsack")
					v = median(dsack[k])
				else
					v = sprintf("%.3f", median(up[k]))
				if (fails[k])
					v = v " (" fails[k] "F)"
				printf " %14s", v
			}
			printf "\n"
		}
	}
	END {
		table("time to the last replica / tcpcopy (for tcpcopy: its seconds)", "ratio")
		table("TCP retransmissions, all hosts together", "retrans")
		table("of them needless (DSACKs received, all hosts)", "dsack")
		table("packets the links dropped (every NIC, both ways)", "drops")
		table("host 1 upload (eth0 TX bytes, headers included) / file size", "upload")
		printf "\nmedians of the runs; nF: n failed runs, left out\n"
	}' "$1"
}

if [ "${1:-}" = --table ]; then
	[ -f "${2:-}" ] || { echo "usage: bench/cluster.sh --table TSV" >&2; exit 2; }
	tables "$2"
	exit 0
fi

if [ -z "${BENCH_SCENARIOS:-}" ] && [ -n "${BENCH_SIZES:-}${BENCH_RATE:-}${BENCH_MIB:-}" ]; then
	for n in ${BENCH_SIZES:-4 8 16}; do
		BENCH_SCENARIOS="${BENCH_SCENARIOS:-}${BENCH_SCENARIOS:+ }$n:${BENCH_RATE:-200mbit}:${BENCH_MIB:-128}"
	done
fi
SCENARIOS=${BENCH_SCENARIOS:-4:200mbit:128 8:200mbit:128 16:200mbit:128 32:100mbit:64 64:50mbit:32}
RUNS=${BENCH_RUNS:-3}
ALGS=${BENCH_ALGS:-binomial chain}
BLOCK=${BENCH_BLOCK:-128K}
TRACE_DIR=${BENCH_TRACE:-}
TRACE_TO= SCENARIO_TAG=
OPTS=${BENCH_OPTS:-}
ONE=${BENCH_ONE:-1}
TMO=${BENCH_TIMEOUT:-600}
OUT=${BENCH_OUT:-/tmp/rdmcp-bench-$(date +%Y%m%d-%H%M%S)/bench.tsv}
PLOT=${BENCH_PLOT-$(dirname "$OUT")/bench-ratio.png}
export RDMCP_NS=${RDMCP_NS:-rdmcpbench}
DATA=/dev/shm/rdmcp-bench.$$
# shellcheck source-path=SCRIPTDIR source=lib.bash
. "$(dirname "$0")/lib.bash"
CPORT=$((PORT + 1))
BG=		# the run in progress
trap '[ -z "$BG" ] || kill "$BG" 2>/dev/null; bench_cleanup' EXIT
TCPCOPY=$TOP/build/tests/tcpcopy
TCPCHAIN=$TOP/build/tests/tcpchain
if [ ! -x "$TCPCOPY" ] || [ ! -x "$TCPCHAIN" ]; then
	echo "bench/cluster.sh: run 'make bench'" >&2
	exit 2
fi
for s in $SCENARIOS; do
	if ! [[ $s =~ ^([0-9]+):([0-9.]+[a-zA-Z]*):([1-9][0-9]*)$ ]] ||
		[ "${BASH_REMATCH[1]}" -lt 2 ] || [ "${BASH_REMATCH[1]}" -gt 1000 ]; then
		echo "bench/cluster.sh: scenario '$s' is not N:RATE:MIB (N 2..1000, MIB >= 1)" >&2
		exit 2
	fi
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "bench/cluster.sh: BENCH_RUNS must be >= 1" >&2; exit 2; }

N=0 SIZE=0 HOSTS=
ANCHOR=()	# a process in each host's namespace, to read its /proc/net

# anchors: a sleeping process on every host, whose /proc/PID/net is that
# host's; 'cluster down' kills them.
anchors() {
	local i t
	ANCHOR=()
	for i in $(seq 1 "$N"); do
		"$CLUSTER" exec "$i" sleep 86400 &
		ANCHOR[i]=$!
		disown
	done
	for i in $(seq 1 "$N"); do
		for t in $(seq 1 100); do	# until ip netns exec has run sleep
			[ "$(readlink "/proc/${ANCHOR[i]}/ns/net")" != "$(readlink /proc/$$/ns/net)" ] && continue 2
			sleep 0.02
		done
		echo "bench/cluster.sh: host $i's namespace did not come up" >&2
		exit 1
	done
}

# listening PORT FROM TO: until hosts FROM..TO all listen on PORT (10 s
# at most), from their /proc/net/tcp
listening() {
	local port i t files=()
	port=$(printf '%04X' "$1")
	for i in $(seq "$2" "$3"); do
		files+=("/proc/${ANCHOR[i]}/net/tcp")
	done
	for t in $(seq 1 500); do
		awk -v p=":$port" '$2 ~ p "$" && $4 == "0A" { n++; nextfile } END { exit n != ARGC - 1 }' "${files[@]}" && return 0
		sleep 0.02
	done
	echo "bench/cluster.sh: hosts $2..$3 do not listen on port $1" >&2
	return 1
}

# sum_of LINE NAME FILE...: the counter NAME of the /proc/net tables (snmp,
# netstat) whose rows start with LINE ("Tcp:", "TcpExt:"), summed over the
# files
sum_of() {
	local line=$1 name=$2
	shift 2
	awk -v line="$line" -v name="$name" 'FNR == 1 { col = 0 }
	$1 == line {
		if (col) { sum += $col; next }
		for (f = 2; f <= NF; f++)
			if ($f == name)
				col = f
	}
	END { printf "%d", sum }' "$@"
}

# counters: "RETRANS TX DROPS DSACK": TCP segments retransmitted by all
# hosts together, bytes sent by host 1's eth0, packets dropped by the
# queues of every NIC (hosts' uploads and the switch ports: downloads),
# DSACKs received by all hosts
counters() {
	local snmp=() netstat=() i drops
	for i in $(seq 1 "$N"); do
		snmp+=("/proc/${ANCHOR[i]}/net/snmp")
		netstat+=("/proc/${ANCHOR[i]}/net/netstat")
	done
	drops=$({
		for i in $(seq 1 "$N"); do
			nsenter -t "${ANCHOR[i]}" -n tc -s qdisc show dev eth0
		done
		ip netns exec "$RDMCP_NS-sw" tc -s qdisc show
	} | awk '{ for (f = 1; f < NF; f++) if ($f ~ /^\(?dropped$/) { v = $(f + 1); sub(/,/, "", v); d += v } }
	END { printf "%d", d }')
	echo "$(sum_of Tcp: RetransSegs "${snmp[@]}")" \
		"$(awk '{ sub(/:/, " ") } $1 == "eth0" { print $10 }' "/proc/${ANCHOR[1]}/net/dev")" \
		"$drops" "$(sum_of TcpExt: TCPDSACKRecv "${netstat[@]}")"
}

# The runs: each prints the seconds to the last replica, or NA (and why,
# on standard error) when it failed.

run_tcpcopy() {
	local t pid
	rm -f "$DATA/h2/unicast"
	timeout -k 5 "$TMO" "$CLUSTER" exec 2 "$TCPCOPY" recv "$CPORT" "$DATA/h2/unicast" &
	pid=$!
	t=NA
	listening "$CPORT" 2 2 &&
		t=$(timeout -k 5 "$TMO" "$CLUSTER" exec 1 "$TCPCOPY" send "$(addr_of 2)" "$CPORT" "$DATA/file")
	wait "$pid" || t=NA
	[ "$(stat -c %s "$DATA/h2/unicast" 2>/dev/null)" = "$SIZE" ] || t=NA
	rm -f "$DATA/h2/unicast"
	echo "$t"
}

# run_rdmcp N HOSTS [OPTIONS]: rdmcp from host 1 to HOSTS (hosts 2..N)
run_rdmcp() {
	local n=$1 hosts=$2 i out last
	shift 2
	rm -rf "$DATA"/h*/"$DATA"
	for i in $(seq 2 "$n"); do
		mkdir -p "$DATA/h$i/$DATA"
	done
	# shellcheck disable=SC2086
	out=$(timeout -k 5 "$TMO" "$CLUSTER" exec 1 "$RDMCP" --json -P "$PORT" "$@" $OPTS \
		${TRACE_TO:+--trace "$TRACE_TO"} \
		"$DATA/file" "$hosts" 2>&1) || true
	last=$(echo "$out" | sed -n 's/.*"event":"summary".*"last":\([0-9.]*\).*/\1/p')
	echo "$out" | grep "^rdmcp: slow:" | sed "s|^|bench/cluster.sh: $n hosts, rdmcp $*: |" >&2 || true
	if [ -z "$last" ] || ! echo "$out" | grep -q "\"complete\":$((n - 1)),\"failed\":0"; then
		echo "bench/cluster.sh: rdmcp $* failed: $(echo "$out" | tail -3)" >&2
		last=NA
	fi
	rm -rf "$DATA"/h*/"$DATA"
	echo "$last"
}

run_tcpchain() {
	local i t pids=() args
	for i in $(seq "$N" -1 2); do
		args=(relay -t "$TMO" "$CPORT" "$DATA/h$i/chain.out")
		[ "$i" -lt "$N" ] && args+=("$(addr_of $((i + 1)))" "$CPORT")
		"$CLUSTER" exec "$i" "$TCPCHAIN" "${args[@]}" &
		pids+=($!)
	done
	t=$("$CLUSTER" exec 1 "$TCPCHAIN" send -t "$TMO" "$(addr_of 2)" "$CPORT" "$DATA/file") || t=NA
	for i in "${pids[@]}"; do
		wait "$i" || t=NA
	done
	for i in $(seq 2 "$N"); do
		[ "$(stat -c %s "$DATA/h$i/chain.out" 2>/dev/null)" = "$SIZE" ] || t=NA
	done
	rm -f "$DATA"/h*/chain.out
	[ "$t" = NA ] && echo "bench/cluster.sh: tcpchain failed" >&2
	echo "$t"
}

ADDRS=()
addr_of() {
	echo "${ADDRS[$1]}"
}

# measure TOOL RUN CMD...: run CMD, append "TOOL RUN SECONDS RETRANS TX"
# to $DATA/raw
measure() {
	local tool=$1 run=$2 t b a
	shift 2
	TRACE_TO=${TRACE_DIR:+$TRACE_DIR/$SCENARIO_TAG-$tool-$run.json}
	b=$(counters)
	# in the background: a signal then reaches our trap at once (bash
	# would drop a Ctrl-C that its foreground child survives)
	"$@" >"$DATA/t" &
	BG=$!
	wait "$BG" || true
	BG=
	t=$(cat "$DATA/t")
	t=${t:-NA}
	a=$(counters)
	echo "$tool $run $t $b $a" |
		awk '{ print $1 "\t" $2 "\t" $3 "\t" $8 - $4 "\t" $9 - $5 "\t" $10 - $6 "\t" $11 - $7 }' >>"$DATA/raw"
	printf '.' >&2
}

# scenario N:RATE:MIB: every column, RUNS rounds; appends to OUT
scenario() {
	local s=$1 rate mib r alg uni
	IFS=: read -r N rate mib <<<"$s"
	SCENARIO_TAG=${s//:/-}	# names its traces
	SIZE=$((mib << 20))
	if [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -le $(((N + 1) * mib * 1024)) ]; then
		echo "bench/cluster.sh: $s: /dev/shm has less than $(((N + 1) * mib)) MiB free" >&2
		exit 1
	fi
	echo "== $N hosts, every NIC at $rate both ways, $mib MiB, $RUNS runs"
	"$CLUSTER" up "$N" "$rate"
	ADDRS=()
	for r in $(seq 1 "$N"); do
		ADDRS[r]=$("$CLUSTER" addr "$r")
	done
	HOSTS=$(IFS=,; echo "${ADDRS[*]:2}")
	anchors
	start_daemons "$N"
	listening "$PORT" 2 "$N"
	head -c "$SIZE" /dev/urandom >"$DATA/file"
	: >"$DATA/raw"
	for r in $(seq 1 "$RUNS"); do
		measure tcpcopy "$r" run_tcpcopy
		[ "$ONE" = 1 ] && measure rdmcp-1to1 "$r" run_rdmcp 2 "$(addr_of 2)"
		measure default "$r" run_rdmcp "$N" "$HOSTS"
		for alg in $ALGS; do
			for b in $BLOCK; do
				measure "$alg-$b" "$r" run_rdmcp "$N" "$HOSTS" -a "$alg" -b "$b"
			done
		done
		measure tcpchain "$r" run_tcpchain
	done
	echo >&2
	"$CLUSTER" down
	uni=$(awk '$1 == "tcpcopy" && $3 != "NA" { print $3 }' "$DATA/raw" | median)
	if [ -z "$uni" ] || [ "$uni" = NA ]; then
		echo "bench/cluster.sh: $s: no tcpcopy run succeeded" >&2
		exit 1
	fi
	awk -v s="$s" -v n="$N" -v rate="$rate" -v mib="$mib" -v uni="$uni" -v size="$SIZE" '
	BEGIN { OFS = "\t" }
	{
		ratio = $3 == "NA" ? "NA" : sprintf("%.4f", $3 / uni)
		print s, n, rate, mib, $1, $2, $3, ratio, $4, sprintf("%.4f", $5 / size), $6, $7
	}' "$DATA/raw" >>"$OUT"
	awk -F '\t' -v s="$s" '$1 == s' "$OUT" >"$DATA/one.tsv"
	block "$DATA/one.tsv"
}

mkdir -p "$(dirname "$OUT")"
[ -z "$TRACE_DIR" ] || mkdir -p "$TRACE_DIR"
{
	printf '# rdmcp bench %s, %s (commit %s), %s cores, load %s\n' \
		"$(date -u +%Y-%m-%dT%H:%MZ)" "$("$RDMCP" --version | head -1)" \
		"$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo '?')" \
		"$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '# runs %s, algorithms %s, block %s, extra options "%s", TCP congestion control %s\n' \
		"$RUNS" "$ALGS" "$BLOCK" "$OPTS" \
		"${RDMCP_NS_CC:-$(sysctl -n net.ipv4.tcp_congestion_control)}"
	printf '# scenario\tn\trate\tmib\ttool\trun\tseconds\tratio\tretrans\tupload\tdrops\tdsack\n'
} >"$OUT"
echo "rdmcp bench: scenarios $SCENARIOS; $RUNS runs each, medians; TCP congestion control ${RDMCP_NS_CC:-$(sysctl -n net.ipv4.tcp_congestion_control)}"
echo "load:$(uptime | sed 's/.*load/ load/')"
awk '$1 > 0.5 { print "bench/cluster.sh: warning: the machine is not idle (load " $1 "): the figures will be noisy" }' /proc/loadavg
started=$SECONDS
for s in $SCENARIOS; do
	scenario "$s"
done
tables "$OUT"
echo
echo "raw results (one line per run): $OUT"
if [ -n "$PLOT" ]; then
	if command -v gnuplot >/dev/null; then
		"$TOP/bench/plot.sh" "$OUT" "$PLOT" && echo "plot: $PLOT"
	else
		echo "no gnuplot: no plot (scripts/install-deps.sh installs it)"
	fi
fi
echo "took $((SECONDS - started)) s"
