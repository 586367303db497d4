#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/resume.sh - a member killed mid-push, with and without kept
# copies (what 'make bench-resume' runs; no root: loopback daemons).
#
# In RUNS rounds, for each daemon setting (default: --keep-partial 3600;
# then --keep-partial 0, which keeps nothing, as before resume existed):
# 3 daemons, a 32 MiB file pushed as a chain at --bwlimit 4M (8 s
# undisturbed, so that the machine's load does not decide the times),
# and the daemon of host 2 killed once host 3 holds half of the file.
# The retry sends hosts 1 and 3 what they lack.  Prints, per setting, the
# medians of the push's wall time and of the bytes the sender sent over
# all its attempts, over the file's size.  Every copy is compared with
# the source; the killed host must be reported failed and hold nothing.
set -euo pipefail
RUNS=${BENCH_RUNS:-3}
TOP=$(cd "$(dirname "$0")/.." && pwd)
export RDMCP=${RDMCP:-$TOP/rdmcp}
one() {
	DOPTS="$1" TEST_NAME=bench-resume bash -c '
. "$0/tests/lib.sh"
start_daemons 3 $DOPTS
size=$((32 << 20))
src=$WORK/src; mkdir -p "$src"; make_file "$src/data" "$size"
stage=$WORK/stage; prepare_dirs 3 "$stage"
mid_landed() {
	local f
	for f in $(find "$WORK/h3$stage" -name ".*.rdmcp-*" -type f 2>/dev/null); do
		[ -n "$(dd if="$f" bs=4096 skip=$((size / 2 / 4096)) count=1 status=none |
			tr -d "\000" | head -c 1)" ] && return 0
	done
	return 1
}
t0=$(date +%s%N)
"$RDMCP" --json -a chain -b 256K --bwlimit 4M --retries 1 -t 3 -d "$stage/" \
	"$src/data" "$(hosts 3)" >"$WORK/out" 2>"$WORK/err" &
pid=$!
for t in $(seq 1 600); do mid_landed && break; sleep 0.1; done
mid_landed || fail "half of the file never landed on host 3"
kill_daemon 2
wait "$pid" || true
t1=$(date +%s%N)
for i in 1 3; do cmp -s "$src/data" "$WORK/h$i$stage/data" || fail "host $i: no copy"; done
[ ! -e "$WORK/h2$stage/data" ] || fail "host 2 holds a copy"
sent=$(sed -n "s/.*\"event\":\"summary\".*\"sent\":\([0-9]*\).*/\1/p" "$WORK/out")
echo "RESULT $(( (t1 - t0) / 1000000 )) $sent $size"
' "$TOP" | sed -n 's/^RESULT //p'
}
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '%-24s %10s %12s\n' "daemons" "wall s" "sent/file"
for opt in "" "--keep-partial 0"; do
	walls=() ratios=()
	for r in $(seq 1 "$RUNS"); do
		read -r ms sent size < <(one "$opt")
		walls+=("$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')")
		ratios+=("$(awk -v a="$sent" -v b="$size" 'BEGIN { printf "%.4f", a / b }')")
	done
	printf '%-24s %10s %12s\n' "${opt:---keep-partial 3600}" \
		"$(printf '%s\n' "${walls[@]}" | median)" \
		"$(printf '%s\n' "${ratios[@]}" | median)"
done
