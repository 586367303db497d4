# SPDX-License-Identifier: MIT
# A directory of a tree (-r) never lands through a symbolic link in its
# place, even with --force, as the man page's DESTINATIONS table says
# (issue 39, item 0): with small -> realdir on the host, the tree was
# written into realdir, ok, without --force; nested links too with
# --force.  Now refused, saying what to give instead, and nothing is
# written through the link.  The directory of -d DIR/ is no copy of a
# source's but where the job lands: a link there is followed, as the
# destination's parents are.
. "$(dirname "$0")/../lib.sh"
start_daemons 1
src=$WORK/src
mkdir -p "$src/small/sub" "$src/tree/sub"
make_file "$src/small/a" 3000
make_file "$src/small/sub/b" 3000
make_file "$src/tree/sub/c" 3000
stage=$WORK/stage
on1=$WORK/h1$stage		# the stage on host 1
mkdir -p "$on1/realdir" "$on1/tree"
ln -s realdir "$on1/small"
ln -s ../realdir "$on1/tree/sub"

# the top of the tree is a link: refused, with and without --force
for force in "" --force; do
	expect_status 1 "$RDMCP" -v -r $force -d "$stage" "$src/small" "$(hosts 1)"
	grep -q "FAILED .*/small is a symbolic link (to realdir), not a directory: a tree is not merged through a link, even with --force" \
		"$WORK/out" || fail "link ${force:-without --force}: $(cat "$WORK/out" "$WORK/err")"
	[ -z "$(ls -A "$on1/realdir")" ] || fail "written through the link: $(ls -R "$on1/realdir")"
	[ "$(readlink "$on1/small")" = realdir ] || fail "the link was replaced"
done

# a link below a directory that is merged into: refused too
expect_status 1 "$RDMCP" -v -r --force -d "$stage" "$src/tree" "$(hosts 1)"
grep -q "FAILED .*/tree/sub is a symbolic link (to ../realdir), not a directory" \
	"$WORK/out" || fail "nested link: $(cat "$WORK/out" "$WORK/err")"
[ -z "$(ls -A "$on1/realdir")" ] || fail "written through the nested link"

# -d DIR/ where DIR is a link to a directory of the root: followed
ln -s stage "$WORK/h1$WORK/stagelink"
expect_status 0 "$RDMCP" -v -d "$WORK/stagelink/" "$src/small/a" "$(hosts 1)"
cmp -s "$src/small/a" "$on1/a" || fail "-d DIR/ through a link: $(cat "$WORK/out" "$WORK/err")"
assert_no_temporaries
