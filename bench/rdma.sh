#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/rdma.sh - rdmcp over RDMA verbs on Soft-RoCE, against perftest.
#
# Boots the Soft-RoCE VM (scripts/rxe-vm.sh) with four rxe devices and, in
# the same run, measures:
#   - ib_send_bw between rxe0 and rxe1 (1 MiB messages): the devices' limit
#     (median of RUNS runs, like every figure here);
#   - rdmcp 1 -> 1 over verbs, and its ratio to ib_send_bw;
#   - rdmcp 1 -> 3 over verbs (binomial pipeline), and its ratio to 1 -> 1;
#   - the same two pushes over TCP inside the VM;
# medians of RUNS runs after a warm-up push (the VM makes the first
# rdma_cm contact between two devices take seconds).  Also prints how busy
# the VM's CPUs were, how much of that was rdmcp itself rather than the
# kernel, since Soft-RoCE under emulation is CPU-bound, and rdmcp's own
# user-space CPU time per MiB landed (block copies in our code show there;
# busy polling too: compare with BENCH_INTERRUPTS=1).
#
# Settings: BENCH_MIB (128), BENCH_RUNS (3), BENCH_BLOCK (1M),
# BENCH_INTERRUPTS (0; 1: --interrupts everywhere).  Needs root.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)

if [ "${RXE_VM:-}" != 1 ]; then
	[ "$(id -u)" -eq 0 ] || { echo "bench/rdma.sh: needs root" >&2; exit 77; }
	export RXE_VM_NDEV=4 RXE_VM_SHARE=$TOP RXE_VM_MEM=${RXE_VM_MEM:-3072}
	export RXE_VM_TIMEOUT=${RXE_VM_TIMEOUT:-1800}
	exec "$TOP/scripts/rxe-vm.sh" -- "BENCH_MIB=${BENCH_MIB:-128} \
		BENCH_INTERRUPTS=${BENCH_INTERRUPTS:-0} \
		BENCH_RUNS=${BENCH_RUNS:-3} BENCH_BLOCK=${BENCH_BLOCK:-1M} \
		$TOP/bench/rdma.sh"
fi

MIB=${BENCH_MIB:-128}
RUNS=${BENCH_RUNS:-3}
BLOCK=${BENCH_BLOCK:-1M}
RDMCP=$TOP/rdmcp
# BENCH_INTERRUPTS=1: every rdmcp with --interrupts (no busy polling)
POLL=
[ "${BENCH_INTERRUPTS:-0}" = 1 ] && POLL=--interrupts
D=/tmp/bench-rdma
PORT=7471
mkdir -p "$D/src"
rm -f "$D/key"
"$RDMCP" -q --genkey "$D/key"
export RDMCP_KEY=$D/key
head -c "$((MIB << 20))" /dev/urandom >"$D/src/file"

median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

DPIDS=()
for i in 2 3 4; do
	mkdir -p "$D/h$i$D/src"
	"$RDMCP" --serve -q $POLL --listen "198.18.0.$i:$PORT" --prefix "$D/h$i" &
	DPIDS+=($!)
done
sleep 2

# perftest: MB/s (10^6 bytes) average for 1 MiB sends, rxe0 -> rxe1
perftest() {
	local srv out
	timeout 120 ib_send_bw -d rxe1 -x 1 -s 1048576 -n 400 >/dev/null 2>&1 &
	srv=$!
	sleep 2
	out=$(timeout 120 ib_send_bw -d rxe0 -x 1 -s 1048576 -n 400 198.18.0.2 \
		2>/dev/null | awk '$1 == 1048576 { print $4 }') || true
	kill "$srv" 2>/dev/null || true
	wait "$srv" 2>/dev/null || true
	echo "${out:-0}"
}
perf_mbs=$(for r in $(seq "$RUNS"); do perftest; done | median)

# one push: seconds to the last replica
push() {
	local hosts=$1
	shift
	rm -f "$D"/h*"$D/src/file"
	timeout 600 "$RDMCP" --bind 198.18.0.1 -b "$BLOCK" $POLL "$@" "$D/src/file" "$hosts" |
		tail -1 | sed -n 's/.* in \([0-9.]*\) s,.*/\1/p'
}

one=198.18.0.2:$PORT
three=198.18.0.2:$PORT,198.18.0.3:$PORT,198.18.0.4:$PORT
push "$three" --transport verbs >/dev/null	# warm-up: rdma_cm first contacts
push "$three" --transport tcp >/dev/null

cpu_busy() {
	# percentage of CPU time not idle since the given /proc/stat snapshot
	awk -v before="$1" 'NR == 1 { split(before, b); idle = $5 - b[5];
		total = 0; for (i = 2; i <= NF; i++) total += $i - b[i];
		printf "%.0f", 100 * (total - idle) / total }' /proc/stat
}

busy_ticks() {		# CPU ticks not idle, machine-wide
	awk 'NR == 1 { t = 0; for (i = 2; i <= NF; i++) if (i != 5) t += $i; print t }' /proc/stat
}

rdmcp_ticks() {		# user + system ticks (user only: $1 = user) of the
	local p t=0	# daemons and of our reaped children (the senders)
	for p in "${DPIDS[@]}" "$BASHPID"; do
		t=$((t + $(awk -v self="$([ "$p" = "$BASHPID" ] && echo 1)" \
			-v user="${1:-}" '{ sub(/.*\) /, "");
			if (user) print self ? $14 : $12
			else print self ? $14 + $15 : $12 + $13 }' \
			"/proc/$p/stat")))
	done
	echo "$t"
}

# median seconds, VM CPU busy %, the share of that busy time spent in
# rdmcp processes (the rest is mostly the kernel: rxe, TCP, copies), and
# rdmcp's user-space CPU ms per MiB landed (where copies of block data in
# our own code would show) for `replicas` receivers
measure() {
	local hosts=$1 replicas=$2 r t snap b0 r0 u0
	shift 2
	snap=$(head -1 /proc/stat)
	b0=$(busy_ticks)
	r0=$(rdmcp_ticks)
	u0=$(rdmcp_ticks user)
	t=$(for r in $(seq "$RUNS"); do push "$hosts" "$@"; done | median)
	echo "$t $(cpu_busy "$snap") $(awk -v b="$(($(busy_ticks) - b0))" \
		-v r="$(($(rdmcp_ticks) - r0))" 'BEGIN { printf "%.0f", b ? 100 * r / b : 0 }') \
		$(awk -v u="$(($(rdmcp_ticks user) - u0))" -v hz="$(getconf CLK_TCK)" \
		-v mib="$((MIB * replicas * RUNS))" 'BEGIN { printf "%.2f", 1000 * u / hz / mib }')"
}

read -r v1 c1 u1 m1 <<<"$(measure "$one" 1 --transport verbs)"
read -r v3 c3 u3 m3 <<<"$(measure "$three" 3 --transport verbs)"
read -r t1 ct1 ut1 mt1 <<<"$(measure "$one" 1 --transport tcp)"
read -r t3 ct3 ut3 mt3 <<<"$(measure "$three" 3 --transport tcp)"

rate() {	# MB/s (10^6) of MIB MiB in $1 seconds
	awk -v s="$1" -v m="$MIB" 'BEGIN { printf "%.1f", m * 1048576 / s / 1e6 }'
}

echo "rdmcp bench-rdma: ${MIB} MiB, ${BLOCK} blocks, Soft-RoCE in QEMU (TCG, $(nproc) vCPUs), $RUNS runs, medians${POLL:+, $POLL}"
printf '%-34s %10s %9s  %-22s %s\n' "" "MB/s" "ratio" "VM CPU busy (in rdmcp)" \
	"rdmcp user ms/MiB"
printf '%-34s %10s %9s\n' "ib_send_bw rxe0 -> rxe1 (1 MiB)" "$perf_mbs" ""
printf '%-34s %10s %9s  %-22s %s\n' "rdmcp verbs 1 -> 1" "$(rate "$v1")" \
	"$(awk -v a="$(rate "$v1")" -v b="$perf_mbs" 'BEGIN { printf "%.2f", a / b }')" "$c1% ($u1%)" "$m1"
printf '%-34s %10s %9s  %-22s %s\n' "rdmcp verbs 1 -> 3 (binomial)" "$(rate "$v3")" \
	"$(awk -v a="$v1" -v b="$v3" 'BEGIN { printf "%.2f", a / b }')" "$c3% ($u3%)" "$m3"
printf '%-34s %10s %9s  %-22s %s\n' "rdmcp tcp 1 -> 1" "$(rate "$t1")" "" "$ct1% ($ut1%)" "$mt1"
printf '%-34s %10s %9s  %-22s %s\n' "rdmcp tcp 1 -> 3 (binomial)" "$(rate "$t3")" \
	"$(awk -v a="$t1" -v b="$t3" 'BEGIN { printf "%.2f", a / b }')" "$ct3% ($ut3%)" "$mt3"
echo "(ratios: verbs 1->1 to ib_send_bw; 1->3 to 1->1 of the same transport;"
echo " in rdmcp: the share of the busy CPU time spent in rdmcp processes;"
echo " user ms/MiB: rdmcp's own user-space CPU per MiB landed, all replicas)"
kill $(jobs -p) 2>/dev/null || true
wait 2>/dev/null || true
