#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# slurm.sh - rdmcp beside Slurm's own broadcast, on a real Slurm: what an
# admin would compare before deploying rdmcp.
#
# For each scenario N:RATE:MIB, brings up a Slurm cluster of N nodes whose
# NICs are shaped to RATE both ways, as 'make bench' shapes them
# (scripts/slurm-cluster.sh on scripts/netns-cluster.sh: Debian's
# slurmctld and one slurmd per node, each node a network namespace), an
# rdmcp daemon on every node, and a file of MIB MiB in the shared scratch
# directory.  Then, in RUNS rounds that each run every column once in
# turn, copies the file to the local disk of all N nodes of an N-node
# sbatch job, from its batch host (node01), timed there from the command's
# start to its end:
#   tcpcopy        one plain TCP copy from node01 to node02, outside Slurm
#                  (tests/helpers/tcpcopy): the physical limit, what every
#                  ratio divides by
#   rdmcp          from the batch script: cp to node01's own disk, then
#                  'rdmcp -x node01 -d DIR FILE $SLURM_JOB_NODELIST'
#                  (default options)
#   example        the stage-in example as shipped
#                  (contrib/slurm-stage-example.sh, STAGE_MKDIR=0: the
#                  directory is there): cp, then rdmcp --verify
#   sbcast         'sbcast FILE DIR/FILE', Slurm's broadcast as it comes:
#                  8 MiB blocks, each sent down a tree of slurmds and
#                  acknowledged by all before the next; --fanout 8
#   sbcast-FK      sbcast --fanout=K, for each K of BENCH_SBCAST_FANOUTS
#   srun-bcast     'srun --bcast=DIR/FILE FILE' on every node (the file is
#                  an executable that exits at once): sbcast's broadcast
#                  with its default fan-out, and a step's launch
# --fanout sets the tree's first level only: a slurmd passes a block on to
# the rest of its part of the list in a tree of slurm.conf's TreeWidth
# (default 50), so with the default every slurmd below the first level
# sends to all of its part at once.  So, after the rounds, for each W of
# BENCH_SBCAST_TREES the cluster comes up again with TreeWidth=W and
# measures RUNS more copies:
#   sbcast-treeW   sbcast --fanout=W on a cluster whose TreeWidth is W: a
#                  tree of width W at every level, which an admin sets
#                  for the whole cluster
# After every copy each node's disk is checked against the source (cmp);
# a copy that is missing or differs makes that run NA.  For every run it
# also records node01's upload (its eth0's TX bytes, headers included,
# over the file size).
#
# Prints, per scenario, the medians of the runs and their ratio to
# tcpcopy, and the best sbcast column; then a summary with a column per
# tool; writes one line per run to the TSV BENCH_OUT (scenario, n, rate,
# mib, tool, run, seconds, ratio, upload, the 1-minute load average after
# the run: other work on the machine shows there; '#' lines say when and
# what).
# 'slurm.sh --table TSV' prints the summary of an earlier run.
#
# Settings (environment):
#   BENCH_SLURM_SCENARIOS  N:RATE:MIB ... (default "16:200mbit:128
#                    64:20mbit:8", as 'make bench': about 40 minutes on 2
#                    cores; 64 nodes at 200mbit would need 12.8 Gbit/s of
#                    emulation, more than 2 cores can do)
#   BENCH_RUNS (3)   BENCH_SBCAST_FANOUTS ("2 4": --fanout values besides
#                    the default 8; sbcast takes at most 8)
#   BENCH_SBCAST_TREES ("2": TreeWidth values; "" for none)
#   BENCH_SLURM_TOOLS ("rdmcp example sbcast srun-bcast": the columns
#                    besides tcpcopy; sbcast brings the -FK columns)
#   BENCH_TIMEOUT (600 s a copy)   BENCH_OUT (/tmp/rdmcp-bench-slurm-DATE/bench.tsv)
#   STAGE_SCRIPT (the stage-in example, contrib/slurm-stage-example.sh)
# Needs root, and Slurm and munge installed (scripts/install-deps.sh).
set -euo pipefail

# tables TSV: the summary of a run, a column per tool, and each
# scenario's best sbcast column
tables() {
	awk -F '\t' "$(cat "$(dirname "$0")/median.awk")"'
	/^#/ { next }
	{
		if (!($1 in seen)) { seen[$1] = 1; sc[++nsc] = $1; n[$1] = $2; rate[$1] = $3; mib[$1] = $4 }
		if (!($5 in tseen)) { tseen[$5] = 1; tool[++ntool] = $5 }
		k = $1 SUBSEP $5
		if ($7 == "NA") { fails[k]++; next }
		sec[k] = sec[k] " " $7; ratio[k] = ratio[k] " " $8; up[k] = up[k] " " $9
	}
	function table(title, what,    s, t, k, v) {
		printf "\n%s\n%-4s %-9s %5s", title, "N", "rate", "MiB"
		for (t = 1; t <= ntool; t++)
			printf " %12s", tool[t]
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
				else
					v = sprintf("%.2f", median(up[k]))
				if (fails[k])
					v = v " (" fails[k] "F)"
				printf " %12s", v
			}
			printf "\n"
		}
	}
	function best(    s, t, k, b, bt, r, m) {
		printf "\nthe best sbcast column, against rdmcp\n"
		for (s = 1; s <= nsc; s++) {
			b = ""; bt = ""
			for (t = 1; t <= ntool; t++) {
				k = sc[s] SUBSEP tool[t]
				if (tool[t] !~ /^sbcast/ || !(k in sec))
					continue
				m = median(ratio[k]) + 0
				if (b == "" || m < b) { b = m; bt = tool[t] }
			}
			k = sc[s] SUBSEP "rdmcp"
			r = (k in sec) ? median(ratio[k]) + 0 : 0
			printf "%-4s %-9s %5s  %s %.3f", n[sc[s]], rate[sc[s]], mib[sc[s]], bt == "" ? "none" : bt, b
			if (bt != "" && r > 0)
				printf ", %.1f times rdmcp'"'"'s %.3f", b / r, r
			printf "\n"
		}
	}
	END {
		table("time to the last copy / tcpcopy (for tcpcopy: its seconds)", "ratio")
		table("node01 upload (eth0 TX bytes) / file size", "upload")
		best()
		printf "\nmedians of the runs; nF: n failed runs, left out\n"
	}' "$1"
}

if [ "${1:-}" = --table ]; then
	[ -f "${2:-}" ] || { echo "usage: bench/slurm.sh --table TSV" >&2; exit 2; }
	tables "$2"
	exit 0
fi

SCENARIOS=${BENCH_SLURM_SCENARIOS:-16:200mbit:128 64:20mbit:8}
RUNS=${BENCH_RUNS:-3}
FANOUTS=${BENCH_SBCAST_FANOUTS-2 4}
TREES=${BENCH_SBCAST_TREES-2}
TOOLS=${BENCH_SLURM_TOOLS:-rdmcp example sbcast srun-bcast}
TMO=${BENCH_TIMEOUT:-600}
OUT=${BENCH_OUT:-/tmp/rdmcp-bench-slurm-$(date +%Y%m%d-%H%M%S)/bench.tsv}
export RDMCP_NS=${RDMCP_NS:-rdsbench}
DATA=/dev/shm/rdmcp-bench-slurm.$$
# root, RDMCP, the key (RDMCP_KEY), median; removes DATA and the
# namespaces on exit
# shellcheck source-path=SCRIPTDIR source=lib.bash
. "$(dirname "$0")/lib.bash"
ME=bench/slurm.sh
SLURM=$TOP/scripts/slurm-cluster.sh
STAGE_SCRIPT=${STAGE_SCRIPT:-$TOP/contrib/slurm-stage-example.sh}
TCPCOPY=$TOP/build/tests/tcpcopy
CPORT=$((PORT + 1))	# tcpcopy's, in the nodes' own namespaces
RAW=$DATA/raw		# this scenario's runs, "TOOL RUN SECONDS UPLOAD"

if [ ! -x "$TCPCOPY" ]; then
	echo "$ME: run 'make bench-slurm'" >&2
	exit 2
fi
for c in slurmctld slurmd sbatch sbcast munged; do
	command -v "$c" >/dev/null ||
		{ echo "$ME: no $c: scripts/install-deps.sh installs Slurm and munge" >&2; exit 2; }
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "$ME: BENCH_RUNS must be >= 1" >&2; exit 2; }
for t in $TOOLS; do
	case $t in
	rdmcp | example | sbcast | srun-bcast) ;;
	*) echo "$ME: BENCH_SLURM_TOOLS: no column '$t' (rdmcp example sbcast srun-bcast)" >&2; exit 2 ;;
	esac
done
for f in $FANOUTS $TREES; do
	[[ $f =~ ^[1-8]$ ]] ||
		{ echo "$ME: a fan-out is 1..8 (sbcast takes no more than 8), not '$f'" >&2; exit 2; }
done
for s in $SCENARIOS; do
	if ! [[ $s =~ ^([0-9]+):([0-9]+[kmg]bit):([1-9][0-9]*)$ ]] ||
		[ "${BASH_REMATCH[1]}" -lt 2 ] || [ "${BASH_REMATCH[1]}" -gt 250 ]; then
		echo "$ME: scenario '$s' is not N:RATE:MIB (N 2..250, RATE as 200mbit)" >&2
		exit 2
	fi
done

export SLURM_CLUSTER_DIR=$DATA/slurm
# sbcast sends a block (8 MiB) to every node of its part of the list at
# once: up to 32 of them, 110 s at 20 Mbit/s, past the default
# MessageTimeout of 10 s, after which a slurmd gives up on its sender
# ("Socket timed out on send/recv operation").  Real links are 50 to 500
# times faster; the emulation's need a longer timeout.
BASE_CONF=MessageTimeout=300
export SLURM_CLUSTER_LIFETIME=$((TMO * 20))
SD=$SLURM_CLUSTER_DIR
LOCAL=$SD/local
BG=
cleanup() {
	[ -z "$BG" ] || kill "$BG" 2>/dev/null || true
	"$SLURM" down || true
	bench_cleanup
}
trap cleanup EXIT

N=0 SIZE=0 ANCHOR=

node() { printf 'node%02d' "$1"; }

# cluster_up RATE [CONF]: the Slurm cluster of N nodes, with more
# slurm.conf lines CONF; a process on node01 whose /proc/PID/net/dev is
# node01's
cluster_up() {
	# once more if it fails: on a busy machine (load 9) not every one of
	# 64 slurmd was idle within the 2 minutes 'up' gives them (seen once,
	# 2026-11-29); 'up' says which, and cleans up before the retry
	if ! SLURM_CLUSTER_CONF="$BASE_CONF${2:+
$2}" "$SLURM" up "$N" "$1"; then
		echo "$ME: the cluster did not come up; once more" >&2
		SLURM_CLUSTER_CONF="$BASE_CONF${2:+
$2}" "$SLURM" up "$N" "$1"
	fi
	"$SLURM" on node01 sleep $((TMO * 20)) &
	ANCHOR=$!
	disown	# 'down' kills it
	for _ in $(seq 1 100); do	# until it runs in node01's namespace
		[ "$(readlink "/proc/$ANCHOR/ns/net")" != "$(readlink /proc/$$/ns/net)" ] && return 0
		sleep 0.05
	done
	echo "$ME: node01's namespace did not come up" >&2
	exit 1
}

# node_daemons: an rdmcp daemon on every node, writing below LOCAL;
# returns when node01 can connect to each
node_daemons() {
	local k
	mkdir -p "$SD/rdmcpd"
	for k in $(seq 1 "$N"); do
		"$SLURM" on "$(node "$k")" "$RDMCP" --serve -q --root "$LOCAL" \
			--listen "0.0.0.0:$PORT" --state-dir "$SD/rdmcpd/$(node "$k")" </dev/null \
			2>>"$SD/log/rdmcpd-$(node "$k").log" &
		disown	# 'down' kills them
	done
	# shellcheck disable=SC2016 # the inner shell's
	"$SLURM" on node01 timeout 60 bash -c '
		for k in $(seq 1 "$1"); do
			for t in $(seq 1 200); do
				(exec 3<>"/dev/tcp/$(printf node%02d "$k")/$2") 2>/dev/null && continue 2
				sleep 0.05
			done
			echo "no rdmcp daemon on node$k" >&2
			exit 1
		done' sh "$N" "$PORT"
}

tx_bytes() {
	awk '{ sub(/:/, " ") } $1 == "eth0" { print $10 }' "/proc/$ANCHOR/net/dev"
}

# check_copies PATH: every node's disk holds the file at PATH (below
# LOCAL) byte for byte; removes the copies
check_copies() {
	local k ok=0 f
	for k in $(seq 1 "$N"); do
		f=$SD/disk/$(node "$k")/${1#"$LOCAL"/}
		if ! cmp -s "$DATA/file" "$f"; then
			echo "$ME: $(node "$k"): no complete copy at $1" >&2
			ok=1
		fi
		rm -f "$f"
	done
	return "$ok"
}

# run_tcpcopy: node01 -> node02; its seconds
run_tcpcopy() {
	local pid t=NA p
	p=$(printf '%04X' "$CPORT")
	timeout -k 5 "$TMO" "$SLURM" on node02 "$TCPCOPY" recv "$CPORT" "$LOCAL/bench/unicast" &
	pid=$!
	for _ in $(seq 1 250); do
		awk -v p=":$p" '$2 ~ p "$" && $4 == "0A" { f = 1 } END { exit !f }' \
			"/proc/$pid/net/tcp" 2>/dev/null && break
		sleep 0.02
	done
	t=$(timeout -k 5 "$TMO" "$SLURM" on node01 "$TCPCOPY" send \
		"$("$CLUSTER" addr 2)" "$CPORT" "$DATA/file") || t=NA
	wait "$pid" || t=NA
	cmp -s "$DATA/file" "$SD/disk/node02/bench/unicast" || t=NA
	rm -f "$SD/disk/node02/bench/unicast"
	echo "$t"
}

# job_state ID: its JobState ('' while slurmctld does not answer)
job_state() {
	"$SLURM" run scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n 's/^JobState=//p'
}

# run_job TOOL [ARG]: the copy in an N-node job; its seconds
run_job() {
	local tool=$1 arg=${2:-} id st=PENDING rc t0 t1
	rm -f "$SD/jobs/result"
	id=$(env TOOL="$tool" ARG="$arg" "$SLURM" run sbatch --parsable -N "$N" \
		--ntasks-per-node=1 -D "$SD/jobs" -o "$SD/jobs/out.%j" -J "$tool" \
		--time=$((TMO / 60 + 2)) "$SD/jobs/copy.sbatch") || { echo NA; return 0; }
	for _ in $(seq 1 $((TMO * 2 + 120))); do
		st=$(job_state "$id")
		case $st in
		PENDING | RUNNING | CONFIGURING | COMPLETING | "") sleep 0.5 ;;
		*) break ;;
		esac
	done
	case $st in
	PENDING | RUNNING | CONFIGURING | COMPLETING | "")
		"$SLURM" run scancel "$id" || true
		for _ in $(seq 1 60); do
			case $(job_state "$id") in
			PENDING | RUNNING | CONFIGURING | COMPLETING) sleep 0.5 ;;
			*) break ;;
			esac
		done
		st="still $st after $((TMO + 60)) s, cancelled"
		;;
	esac
	rc=NA
	[ -s "$SD/jobs/result" ] && read -r rc t0 t1 <"$SD/jobs/result"
	if [ "$st" != COMPLETED ] || [ "$rc" != 0 ]; then
		echo "$ME: $N nodes, $tool $arg: job $id $st, status $rc: $(tail -n 3 "$SD/jobs/out.$id")" >&2
		check_copies "$LOCAL/bench/file" >/dev/null 2>&1 || true
		echo NA
		return 0
	fi
	if ! check_copies "$LOCAL/bench/file"; then
		echo NA
		return 0
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# measure TOOL RUN CMD...: run CMD, append "TOOL RUN SECONDS UPLOAD
# LOAD" to $RAW (LOAD: the 1-minute load average after it)
measure() {
	local tool=$1 run=$2 t b a
	shift 2
	b=$(tx_bytes)
	# in the background: a signal then reaches our trap at once
	"$@" >"$RAW.t" &
	BG=$!
	wait "$BG" || true
	BG=
	t=$(cat "$RAW.t")
	a=$(tx_bytes)
	echo "$tool $run ${t:-NA} $(awk -v a="$a" -v b="$b" -v s="$SIZE" 'BEGIN { printf "%.3f", (a - b) / s }')" \
		"$(cut -d' ' -f1 /proc/loadavg)" >>"$RAW"
	printf '.' >&2
}

# The job: one copy with TOOL, timed on the batch host; "STATUS T0 T1"
# to ./result
write_job() {
	mkdir -p "$SD/jobs"
	cat >"$SD/jobs/copy.sbatch" <<'EOF'
#!/bin/bash
file=$DATA/file
dest=$LOCAL/bench
t0=$(date +%s.%N)
case $TOOL in
rdmcp)
	cp "$file" "$dest/" &&
		"$RDMCP" -q -P "$PORT" -x "$(hostname -s)" -d "$dest" "$file" "$SLURM_JOB_NODELIST" ;;
example)
	STAGE_DIR=$dest STAGE_MKDIR=0 FAILED_FILE=$PWD/failed.$SLURM_JOB_ID \
		RDMCP_OPTS="-P $PORT" "$STAGE_SCRIPT" "$file" ;;
sbcast)
	sbcast ${ARG:+--fanout=$ARG} "$file" "$dest/file" ;;
srun-bcast)
	srun --bcast="$dest/file" "$file" ;;
*)
	false ;;
esac
rc=$?
echo "$rc $t0 $(date +%s.%N)" >result
EOF
	chmod 755 "$SD/jobs/copy.sbatch"
	mkdir -p "$SD/disk"
	for k in $(seq 1 "$N"); do
		mkdir -p "$SD/disk/$(node "$k")/bench"
	done
}

# scenario N:RATE:MIB: every column, RUNS rounds, then the TreeWidth
# columns; appends to OUT
scenario() {
	local s=$1 rate mib r f t w uni
	IFS=: read -r N rate mib <<<"$s"
	SIZE=$((mib << 20))
	if [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -le $(((N + 2) * mib * 1024)) ]; then
		echo "$ME: $s: /dev/shm has less than $(((N + 2) * mib)) MiB free" >&2
		exit 1
	fi
	echo "== $N nodes, every NIC at $rate both ways, $mib MiB, $RUNS runs"
	printf '# %s from %s, load %s\n' "$s" "$(date -u +%H:%M:%SZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
	# an executable (for srun --bcast) that exits at once, then data
	{ printf '#!/bin/sh\nexit 0\n'; head -c $((SIZE - 17)) /dev/urandom; } >"$DATA/file"
	chmod 755 "$DATA/file"
	export DATA LOCAL RDMCP STAGE_SCRIPT PORT
	: >"$RAW"
	cluster_up "$rate"
	write_job
	node_daemons
	for r in $(seq 1 "$RUNS"); do
		measure tcpcopy "$r" run_tcpcopy
		for t in $TOOLS; do
			measure "$t" "$r" run_job "$t"
			if [ "$t" = sbcast ]; then
				for f in $FANOUTS; do
					measure "sbcast-F$f" "$r" run_job sbcast "$f"
				done
			fi
		done
	done
	for w in $TREES; do
		"$SLURM" down
		cluster_up "$rate" "TreeWidth=$w"
		write_job
		for r in $(seq 1 "$RUNS"); do
			measure "sbcast-tree$w" "$r" run_job sbcast "$w"
		done
	done
	echo >&2
	"$SLURM" down
	uni=$(awk '$1 == "tcpcopy" && $3 != "NA" { print $3 }' "$RAW" | median)
	if ! awk '$1 == "tcpcopy" && $3 != "NA" { ok = 1 } END { exit !ok }' "$RAW"; then
		echo "$ME: $s: no tcpcopy run succeeded" >&2
		exit 1
	fi
	awk -v s="$s" -v n="$N" -v rate="$rate" -v mib="$mib" -v uni="$uni" '
	BEGIN { OFS = "\t" }
	{
		ratio = $3 == "NA" ? "NA" : sprintf("%.4f", $3 / uni)
		print s, n, rate, mib, $1, $2, $3, ratio, $4, $5
	}' "$RAW" >>"$OUT"
	awk -F '\t' -v s="$s" '/^#/ || $1 == s' "$OUT" >"$RAW.one"
	tables "$RAW.one" | head -n -2
}

mkdir -p "$(dirname "$OUT")"
{
	printf '# rdmcp bench-slurm %s, %s (commit %s), %s, %s cores, load %s\n' \
		"$(date -u +%Y-%m-%dT%H:%MZ)" "$("$RDMCP" --version | head -1)" \
		"$(git -C "$TOP" describe --always --dirty 2>/dev/null || echo '?')" \
		"Slurm $(dpkg-query -W -f '${Version}' slurmd 2>/dev/null)" "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"
	printf '# runs %s, columns %s, sbcast fan-outs: default and %s; TreeWidth: %s\n' \
		"$RUNS" "$TOOLS" "$FANOUTS" "${TREES:-none}"
	printf '# scenario\tn\trate\tmib\ttool\trun\tseconds\tratio\tupload\tload\n'
} >"$OUT"
echo "rdmcp bench-slurm: scenarios $SCENARIOS; $RUNS runs each, medians"
awk '$1 > 0.5 { print "'"$ME"': warning: the machine is not idle (load " $1 "): the figures will be noisy" }' /proc/loadavg
others=0
for d in slurmctld slurmd slurmstepd munged; do	# pgrep -x: 15 characters at most
	others=$((others + $(pgrep -c -x "$d" || true)))
done
[ "$others" = 0 ] ||
	echo "$ME: warning: $others Slurm or munge daemons already run here: they share the cores"
started=$SECONDS
for s in $SCENARIOS; do
	scenario "$s"
done
printf '# the end %s, load %s\n' "$(date -u +%H:%M:%SZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
rm -f "$RAW" "$RAW.t" "$RAW.one"
tables "$OUT"
echo
echo "raw results (one line per run): $OUT"
echo "took $((SECONDS - started)) s"
