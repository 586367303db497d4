# SPDX-License-Identifier: MIT
# '-' as a source: standard input, landing as --name NAME (tar c dir |
# rdmcp --name dir.tar -d /dst - HOSTS), spooled to a file without a name
# in $TMPDIR that nothing outlives; its usage errors (2) and a $TMPDIR it
# cannot use (3, nothing sent).
. "$(dirname "$0")/../lib.sh"
start_daemons 2
src=$WORK/src
mkdir -p "$src/tree/sub" "$WORK/tmp"
make_file "$src/tree/a" 5000
make_file "$src/tree/sub/b" $((3 << 20))
prepare_dirs 2 /dst
export TMPDIR=$WORK/tmp

# a tar stream through a pipe, as the admin writes it
(cd "$src" && tar cf - tree) >"$WORK/tree.tar"
(cd "$src" && tar cf - tree) |
	expect_status 0 "$RDMCP" --name tree.tar -d /dst - "$(hosts 2)"
umask_mode=$(printf '%o' $((0666 & ~0$(umask))))
for i in 1 2; do
	cmp -s "$WORK/tree.tar" "$(landed "$i" /dst/tree.tar)" ||
		fail "host $i: /dst/tree.tar is not the stream"
	[ "$(stat -c %a "$(landed "$i" /dst/tree.tar)")" = "$umask_mode" ] ||
		fail "host $i: mode $(stat -c %a "$(landed "$i" /dst/tree.tar)"), want $umask_mode"
done
[ -z "$(ls -A "$TMPDIR")" ] || fail "left in TMPDIR: $(ls -A "$TMPDIR")"
note "tar cf - tree | rdmcp --name tree.tar -d /dst - : $(stat -c %s "$WORK/tree.tar") bytes on 2 hosts"

# with other files, and an empty stream; without -d, NAME is a path
# (made absolute against the current directory, as sources are)
prepare_dirs 2 "$src/out"
prepare_dirs 2 "$src/tree"
mkdir -p "$src/out"
: | (cd "$src/out" && expect_status 0 "$RDMCP" --name empty \
	"$src/tree/a" - "$(hosts 2)")
for i in 1 2; do
	[ -f "$(landed "$i" "$src/out/empty")" ] &&
		[ ! -s "$(landed "$i" "$src/out/empty")" ] ||
		fail "host $i: no empty $src/out/empty"
	cmp -s "$src/tree/a" "$(landed "$i" "$src/tree/a")" || fail "host $i: no a"
done

# usage errors: nothing read, nothing sent
echo data | expect_status 2 "$RDMCP" -d /dst - "$(hosts 2)"
grep -q "'-' (standard input) needs --name NAME" "$WORK/err" || fail "$(cat "$WORK/err")"
echo data | expect_status 2 "$RDMCP" --name x -d /dst - - "$(hosts 2)"
grep -q "may be given once" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 2 "$RDMCP" --name x -d /dst "$src/tree/a" "$(hosts 2)"
grep -q "there is no '-'" "$WORK/err" || fail "$(cat "$WORK/err")"
echo "$(hosts 2)" | expect_status 2 "$RDMCP" -f - --name x -d /dst -
grep -q "cannot be both the hosts (-f -) and a source (-)" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
script -qec "'$RDMCP' --name x -d /dst - '$(hosts 2)'" /dev/null \
	>"$WORK/tty" 2>&1 </dev/null && fail "read from a terminal"
grep -q "which is a terminal" "$WORK/tty" || fail "terminal: $(cat "$WORK/tty")"
for i in 1 2; do
	[ ! -e "$(landed "$i" /dst/x)" ] || fail "host $i: a usage error sent /dst/x"
done

# a $TMPDIR it cannot use: the sender's error (3), nothing sent
echo data | TMPDIR=$WORK/nonexistent expect_status 3 "$RDMCP" --name y \
	-d /dst - "$(hosts 2)"
grep -q "cannot keep standard input in $WORK/nonexistent (TMPDIR): No such file or directory" \
	"$WORK/err" || fail "$(cat "$WORK/err")"
[ ! -e "$(landed 1 /dst/y)" ] || fail "sent without a spool"
assert_no_temporaries
