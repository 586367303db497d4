# SPDX-License-Identifier: MIT
# Exact sizes around block boundaries, an empty file, a few MiB: three hosts
# hold byte-identical copies and no temporary is left behind.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
B=$((1 << 20))
for size in 0 1 $((B - 1)) $B $((B + 1)) $((5 * B + 3)); do
	make_file "$src/f$size" "$size"
	expect_status 0 "$RDMCP" "$src/f$size" "$(hosts 3)"
	assert_copies 3 "$src/f$size"
done
# a small block size: many blocks, and sizes around its boundaries
for size in 4095 4096 4097 $((300 * 4096 + 1)); do
	make_file "$src/g$size" "$size"
	expect_status 0 "$RDMCP" -b 4K "$src/g$size" "$(hosts 3)"
	assert_copies 3 "$src/g$size"
done
assert_no_temporaries
grep -q "3 of 3 replicas complete" "$WORK/out" || fail "no summary line"
