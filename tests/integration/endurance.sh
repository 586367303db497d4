# SPDX-License-Identifier: MIT
# Endurance: 8 concurrent transfers from different senders to the same
# daemons, then 200 back-to-back transfers.  The daemons' resident memory,
# open descriptors and temporary files must be the same before and after
# (memory: within 4 MiB of the level after a warm-up).
. "$(dirname "$0")/../lib.sh"
N=3
start_daemons $N
src=$WORK/src
mkdir -p "$src"
prepare_dirs $N "$src"
rss() { awk '/^VmRSS/ { print $2 }' "/proc/${DAEMON_PIDS[$1]}/status"; }
fds() { ls "/proc/${DAEMON_PIDS[$1]}/fd" | wc -l; }
temps() { find "$WORK"/h* -name '.*.rdmcp-*' | wc -l; }
make_file "$src/small" 65536
for s in $(seq 1 8); do make_file "$src/c$s" $((2 << 20)); done
# warm-up: the allocator's and libuv's first growth is not a leak
for t in $(seq 1 10); do
	expect_status 0 "$RDMCP" --force "$src/small" "$(hosts $N)"
done
declare -A rss0 fds0
for i in $(seq 1 $N); do rss0[$i]=$(rss "$i"); fds0[$i]=$(fds "$i"); done
# 8 senders at once, from 8 source addresses
pids=()
for s in $(seq 1 8); do
	"$RDMCP" --bind "127.0.1.$s" "$src/c$s" "$(hosts $N)" \
		>"$WORK/out$s" 2>&1 &
	pids+=($!)
done
for s in $(seq 1 8); do
	wait "${pids[$((s - 1))]}" || fail "sender $s: $(cat "$WORK/out$s")"
	assert_copies $N "$src/c$s"
done
# 200 back to back
start=$(date +%s%N)
for t in $(seq 1 200); do
	expect_status 0 "$RDMCP" --force "$src/small" "$(hosts $N)"
done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
assert_copies $N "$src/small"
for i in $(seq 1 $N); do
	note "daemon $i: RSS ${rss0[$i]} -> $(rss "$i") KiB, fds ${fds0[$i]} -> $(fds "$i")"
	[ "$(fds "$i")" -eq "${fds0[$i]}" ] || fail "daemon $i leaks descriptors"
	# under ASan freed memory sits in quarantine and RSS means little;
	# LeakSanitizer checks leaks there (make check-asan)
	[ -n "${ASAN_OPTIONS:-}" ] || [ "$(rss "$i")" -le $((rss0[$i] + 4096)) ] ||
		fail "daemon $i grows"
done
[ "$(temps)" -eq 0 ] || fail "temporaries left"
note "200 transfers to $N hosts in $ms ms"
