# SPDX-License-Identifier: MIT
# Resume and delta over verbs (issue 37, item 5): a file with two blocks
# changed is sent as those two blocks to 3 receivers, the group's blocks
# a subset of the stream (START's map) that the verbs transport moves
# from and into the files' registered mappings; --verify reads the whole
# new copies back, and every copy is exact.  Then host 2 without a copy
# and one more block changed: the sender sends that block alone, to the
# first member, and the members pass on over verbs the blocks they had.
. "$(dirname "$0")/rlib.bash"
need_rxe 4
start_daemons 3 --transport verbs
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
B=65536
make_file "$src/big" $((48 * B))
expect_status 0 push --transport verbs -a chain -b 64K "$src/big" "$(hosts 3)"
assert_copies 3 "$src/big"
for blk in 7 40; do
	printf 'changed' | dd of="$src/big" bs=1 seek=$((blk * B + 99)) \
		conv=notrunc status=none
done
expect_status 0 push --json --transport verbs -a chain -b 64K --verify \
	--force "$src/big" "$(hosts 3)"
sent=$(sed -n 's/.*"event":"summary".*"sent":\([0-9]*\).*/\1/p' "$WORK/out")
[ "$sent" = $((2 * B)) ] || fail "sent $sent bytes, want $((2 * B)): $(cat "$WORK/out")"
grep -q '"transport":"verbs"' "$WORK/out" || fail "not over verbs: $(cat "$WORK/out")"
[ "$(grep -c '"verified":true' "$WORK/out")" = 3 ] || fail "not verified: $(cat "$WORK/out")"
assert_copies 3 "$src/big"
note "two blocks changed: $sent bytes sent over verbs"
assert_no_temporaries
rm "$(landed 2 "$src/big")"
printf 'again' | dd of="$src/big" bs=1 seek=$((20 * B + 5)) conv=notrunc status=none
expect_status 0 push --json --transport verbs -a chain -b 64K --verify \
	--force "$src/big" "$(hosts 3)"
sent=$(sed -n 's/.*"event":"summary".*"sent":\([0-9]*\).*/\1/p' "$WORK/out")
[ "$sent" = "$B" ] || fail "host 2 without a copy: sent $sent bytes, want $B: $(cat "$WORK/out")"
[ "$(grep -c '"verified":true' "$WORK/out")" = 3 ] || fail "not verified: $(cat "$WORK/out")"
assert_copies 3 "$src/big"
note "host 2 without a copy: $sent bytes sent, the rest passed on over verbs"
assert_no_temporaries
