# SPDX-License-Identifier: MIT
# A sparse source: the sender never allocates its holes (not even to take
# its crc32 for --verify, where the source lives on tmpfs), and with -S the
# copies keep them; changed in a data block and in a hole, pushed again
# with -S --force, only those two blocks travel and the copies still keep
# their holes (issue 37, item 5); without -S the copies are whole.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
# the source on tmpfs where there is one: reading a hole through a mapping
# allocates it there
srcdir=$src
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	srcdir=$(mktemp -d /dev/shm/rdmcp-sparse.XXXXXX)
	on_exit rm -rf "$srcdir"
fi
sparse=$srcdir/sparse
truncate -s 48M "$sparse"
for mib in 1 20 40; do
	head -c 300000 /dev/urandom |
		dd of="$sparse" bs=1 seek=$((mib * 1048576 + 1234)) conv=notrunc status=none
done
kib() { du -k "$1" | cut -f1; }
src_kib=$(kib "$sparse")
[ "$src_kib" -lt 2048 ] || fail "the source is not sparse here ($src_kib KiB)"

expect_status 0 "$RDMCP" -S --verify -d "$src/" "$sparse" "$(hosts 3)"
grep -q "ok, verified (3 hosts" "$WORK/out" || fail "report: $(cat "$WORK/out")"
[ "$(kib "$sparse")" = "$src_kib" ] || fail "the sender allocated its source's holes: $(kib "$sparse") KiB, was $src_kib"
for i in 1 2 3; do
	dst=$(landed "$i" "$src/sparse")
	cmp -s "$sparse" "$dst" || fail "host $i holds other bytes"
	[ "$(kib "$dst")" -le $((src_kib + 64)) ] ||
		fail "host $i's copy takes $(kib "$dst") KiB, the source $src_kib KiB"
done
note "-S --verify: 3 copies of 48 MiB taking $(kib "$(landed 1 "$src/sparse")") KiB each (source $src_kib KiB)"

# a delta of a sparse file: block 20 changed in its data, block 30 was a
# hole and holds data now; the hosts build their copies from the old
# ones, which keep their holes (a chain: the sender sends each block
# once; the binomial pipeline sends the last one log2 N - 1 times more)
printf 'rdmcp-delta' | dd of="$sparse" bs=1 seek=$((20 * 1048576 + 1334)) \
	conv=notrunc status=none
head -c 4096 /dev/urandom | dd of="$sparse" bs=1 seek=$((30 * 1048576)) \
	conv=notrunc status=none
src_kib=$(kib "$sparse")
expect_status 0 "$RDMCP" -S --force --json -a chain -b 1M -d "$src/" "$sparse" "$(hosts 3)"
sent=$(json_sent)
[ "$sent" = $((2 << 20)) ] || fail "the delta sent ${sent:-no summary} bytes, want the 2 blocks changed: $(cat "$WORK/out")"
for i in 1 2 3; do
	dst=$(landed "$i" "$src/sparse")
	cmp -s "$sparse" "$dst" || fail "host $i holds other bytes after the delta"
	assert_json_ok "after the delta" "$i"
	[ "$(kib "$dst")" -le $((src_kib + 64)) ] ||
		fail "host $i's copy takes $(kib "$dst") KiB after the delta, the source $src_kib KiB"
done
assert_no_temporaries
note "-S delta: sent $sent bytes; copies of $(kib "$(landed 1 "$src/sparse")") KiB (source $src_kib KiB)"

# without -S the copies are whole (so the check above can fail)
expect_status 0 "$RDMCP" -d "$src/whole/" "$sparse" "$(hosts 3)"
dst=$(landed 2 "$src/whole/sparse")
cmp -s "$sparse" "$dst" || fail "host 2 holds other bytes"
[ "$(kib "$dst")" -ge 49152 ] || fail "without -S the copy has holes: $(kib "$dst") KiB"
[ "$(kib "$sparse")" = "$src_kib" ] || fail "the sender allocated its source's holes"
assert_no_temporaries
note "without -S: whole copies; the source still $src_kib KiB"
