# SPDX-License-Identifier: MIT
# Free space where the files land, not on the daemon's root file system
# (issue 39, item 0).  A destination on a separate, too small mount (a
# tmpfs of 64 KiB, as root):
#   - -n said "would take it", looking at the root's file system; then
#     the real push failed "No space left on device".  Now the dry run
#     says which file would not fit, and how much is needed and free;
#   - a tree (-r) whose files fit one by one but not together failed as
#     its blocks landed, with a bare "No space left on device" and no
#     path, and was retried; now it is refused before anything is made,
#     naming its first file, and not retried;
#   - with -S nothing is reserved, so the space runs out as the blocks
#     land: the reason names the directory and says -S reserves nothing,
#     the host is not retried, and the push ends at once (it waited 10 s
#     for a data connection its peer had reset).
. "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "  $TEST_NAME: skipped: needs root to mount a small tmpfs"
	exit 77
fi
start_daemons 1
small=$WORK/small		# on host 1: $WORK/h1$WORK/small, 64 KiB
mkdir -p "$WORK/h1$small"
mount -t tmpfs -o size=64k tmpfs "$WORK/h1$small" || fail "cannot mount a tmpfs"
on_exit "umount $WORK/h1$small"
src=$WORK/src
mkdir -p "$src/tree"
make_file "$src/big" 300000
for i in 1 2 3 4; do make_file "$src/tree/f$i" 40000; done
make_file "$src/sparse" 200000

# -n: the free space of the mount the file lands on
expect_status 1 "$RDMCP" -n -v -d "$small" "$src/big" "$(hosts 1)"
grep -q "FAILED .*$small/big: No space left on device (the job needs 300000 bytes on its file system, [0-9]* are free)" \
	"$WORK/out" || fail "dry run: $(cat "$WORK/out" "$WORK/err")"

# -r: the tree's files together, before anything is made, not retried
expect_status 1 "$RDMCP" -v -r -d "$small" "$src/tree" "$(hosts 1)"
grep -q "FAILED .*$small/tree/f1: No space left on device (the job needs 160000 bytes on its file system" \
	"$WORK/out" || fail "-r: $(cat "$WORK/out" "$WORK/err")"
! grep -q "retrying" "$WORK/err" || fail "-r: retried: $(cat "$WORK/err")"
[ -z "$(ls -A "$WORK/h1$small")" ] || fail "-r left $(ls -A "$WORK/h1$small")"

# -S: out of space as the blocks land; named, not retried, over at once
RDMCP_CMD_LIMIT=8 expect_status 1 "$RDMCP" -v -S -d "$small" "$src/sparse" "$(hosts 1)"
grep -q "FAILED .*$small: No space left on device as the blocks landed (the job's 200000 bytes; -S reserves no space up front)" \
	"$WORK/out" || fail "-S: $(cat "$WORK/out" "$WORK/err")"
! grep -q "retrying" "$WORK/err" || fail "-S: retried: $(cat "$WORK/err")"
[ -z "$(ls -A "$WORK/h1$small")" ] || fail "-S left $(ls -A "$WORK/h1$small")"
assert_no_temporaries
