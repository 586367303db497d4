# SPDX-License-Identifier: MIT
# Re-runs are safe: a host that already holds identical files is reported
# ok, "already identical", and its files are not rewritten; a host whose
# files differ needs --force, and keeps its files without it.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src/tree/sub"
prepare_dirs 3 "$src"
make_file "$src/data" 300000
make_file "$src/tree/a" 5000
make_file "$src/tree/sub/b" 70000
ln -s a "$src/tree/link"

# inode_of I PATH: the inode and change time of host I's copy of PATH
inode_of() {
	stat -c '%i %Z.%z' "$(landed "$1" "$2")"
}

expect_status 0 "$RDMCP" "$src/data" "$(hosts 3)"
before=$(inode_of 2 "$src/data")

# the same push again: ok everywhere, nothing sent, nothing rewritten
expect_status 0 "$RDMCP" --json "$src/data" "$(hosts 3)"
[ "$(jq -s '[.[] | select(.event == "replica" and .ok and .identical)] | length' "$WORK/out")" = 3 ] ||
	fail "not identical: $(cat "$WORK/out")"
[ "$(inode_of 2 "$src/data")" = "$before" ] || fail "host 2's copy was rewritten"
assert_copies 3 "$src/data"
expect_status 0 "$RDMCP" -v --verify "$src/data" "$(hosts 3)"
[ "$(grep -cE "^[^ ]+ +ok +[0-9.]+ s .*already identical, verified" "$WORK/out")" = 3 ] ||
	fail "text report: $(cat "$WORK/out")"
note "the same file again: 3 of 3 already identical, not rewritten"

# one host lacks it: it gets it, the others are left alone
rm "$(landed 3 "$src/data")"
expect_status 0 "$RDMCP" --json "$src/data" "$(hosts 3)"
[ "$(jq -r 'select(.event == "replica" and .identical) | .host' "$WORK/out" | sort | tr '\n' ' ')" = \
	"$(host_addr 1):$PORT $(host_addr 2):$PORT " ] || fail "mixed: $(cat "$WORK/out")"
assert_copies 3 "$src/data"
[ "$(inode_of 2 "$src/data")" = "$before" ] || fail "host 2's copy was rewritten"

# other bytes of the same size: refused without --force, files kept
cp "$src/data" "$WORK/old"
make_file "$src/data" 300000
expect_status 1 "$RDMCP" -v "$src/data" "$(hosts 3)"
[ "$(grep -cE "^[^ ]+ +FAILED +[0-9.]+ s .*exists and differs from the source \(--force replaces it\)" "$WORK/out")" = 3 ] ||
	fail "differs: $(cat "$WORK/out")"
for i in 1 2 3; do
	cmp -s "$WORK/old" "$(landed "$i" "$src/data")" || fail "host $i: changed without --force"
done
expect_status 0 "$RDMCP" --force "$src/data" "$(hosts 3)"
assert_copies 3 "$src/data"
note "other bytes: refused without --force, kept; replaced with it"

# another mode is not identical either
chmod 0600 "$(landed 1 "$src/data")"
expect_status 1 "$RDMCP" "$src/data" "$(hosts 1)"
grep -q "exists and differs from the source (--force replaces it)" "$WORK/out" ||
	fail "mode: $(cat "$WORK/out")"

# with -p too, identity is the content (restage.sh: not sizes and times)
expect_status 0 "$RDMCP" -p --force "$src/data" "$(hosts 3)"
expect_status 0 "$RDMCP" -p --json "$src/data" "$(hosts 3)"
[ "$(jq -s '[.[] | select(.event == "replica" and .identical)] | length' "$WORK/out")" = 3 ] ||
	fail "-p: $(cat "$WORK/out")"

# a whole tree, again
expect_status 0 "$RDMCP" -r -p "$src/tree" "$(hosts 3)"
expect_status 0 "$RDMCP" -r -p "$src/tree" "$(hosts 3)"
grep -qx "127.0.0.\[2-4\]:$PORT: ok, already identical (3 hosts)" "$WORK/out" ||
	fail "tree: $(cat "$WORK/out")"
echo more >>"$src/tree/a"
expect_status 1 "$RDMCP" -r -p "$src/tree" "$(hosts 3)"
grep -q "tree/a exists and differs from the source (--force replaces it)" "$WORK/out" ||
	fail "changed tree: $(cat "$WORK/out")"
note "a tree again: identical; a changed tree needs --force, and names its file"
assert_no_temporaries
