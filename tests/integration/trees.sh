# SPDX-License-Identifier: MIT
# -r: a directory tree as one transfer.  Empty directories, modes, links
# kept as links (even those pointing out of the tree), -p times; merging
# into an existing tree; what is refused, with nothing written.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src/tree
mkdir -p "$src/bin" "$src/lib/sub" "$src/empty" "$src/ro"
make_file "$src/bin/tool" 300000 && chmod 755 "$src/bin/tool"
make_file "$src/lib/sub/data" 70000 && chmod 640 "$src/lib/sub/data"
make_file "$src/secret" 1000 && chmod 600 "$src/secret"
: >"$src/lib/empty-file"
make_file "$src/ro/readme" 5000 && chmod 444 "$src/ro/readme"
chmod 555 "$src/ro"
chmod 2755 "$src/lib"	# set-group-ID: dropped by default
ln -s ../bin/tool "$src/lib/tool-link"
ln -s /etc/passwd "$src/outside-link"
ln -s dangling "$src/dangling-link"
touch -h -d "2001-02-03 04:05:06" "$src/bin/tool" "$src/outside-link" \
	"$src/empty" "$src/lib/sub"
prepare_dirs 3 "$WORK/src"

# listing DIR: every entry's relative path, type, mode (but for links),
# link target, and size
listing() {
	(cd "$1" && find . -printf '%P %y %s %l\n' | sort)
	(cd "$1" && find . ! -type l -printf '%P %m\n' | sort)
}
times_of() {
	(cd "$1" && find . -printf '%P %T@\n' | sort)
}

expect_status 0 "$RDMCP" -r -p -b 8K --verify "$src" "$(hosts 3)"
want=$(listing "$src" | sed 's/^lib 2755$/lib 755/')
for i in 1 2 3; do
	got=$(listing "$(landed "$i" "$src")")
	[ "$got" = "$want" ] || fail "host $i: $(diff <(echo "$want") <(echo "$got"))"
	diff -r --no-dereference "$src" "$(landed "$i" "$src")" >/dev/null ||
		fail "host $i: contents differ"
	[ "$(times_of "$src")" = "$(times_of "$(landed "$i" "$src")")" ] ||
		fail "host $i: -p lost times: $(diff <(times_of "$src") <(times_of "$(landed "$i" "$src")"))"
done
[ "$(readlink "$(landed 1 "$src")/outside-link")" = /etc/passwd ] ||
	fail "a link out of the tree was not kept as a link"
note "$(grep -c . <<<"$want") entries landed on 3 hosts"

# without -p, times are those of the copy
rm -rf "$WORK/h1$src"
expect_status 0 "$RDMCP" -r "$src" "$(hosts 1)"
[ "$(stat -c %Y "$(landed 1 "$src")/bin/tool")" != "$(stat -c %Y "$src/bin/tool")" ] ||
	fail "times kept without -p"

# merging into an existing tree: new entries land, what is identical is
# kept as it is (not rewritten), others stay untouched; a file that
# differs needs --force, and is named
echo keep >"$WORK/h1$src/bin/mine"
make_file "$src/bin/new" 1234
tool_inode=$(stat -c %i "$WORK/h1$src/bin/tool")
expect_status 0 "$RDMCP" -r "$src" "$(hosts 1)"
[ "$(cat "$WORK/h1$src/bin/mine")" = keep ] || fail "merge lost a file"
cmp -s "$src/bin/new" "$WORK/h1$src/bin/new" || fail "merge: new file"
[ "$(stat -c %i "$WORK/h1$src/bin/tool")" = "$tool_inode" ] ||
	fail "merge: an identical file was rewritten"
make_file "$src/bin/new" 1234
expect_status 1 "$RDMCP" -r "$src" "$(hosts 1)"
grep -q "bin/new exists and differs from the source (--force replaces it)" \
	"$WORK/out" || fail "$(cat "$WORK/out")"
expect_status 0 "$RDMCP" -r --force "$src" "$(hosts 1)"
cmp -s "$src/bin/new" "$WORK/h1$src/bin/new" || fail "merge: new file"

# -r -p --force onto that existing tree: files replaced in every
# directory, and every directory of the tree ends with its source's time,
# as rsync -a leaves it, merged ones too (their renames touched them);
# the tree's own files and links keep theirs
dir_times() {
	(cd "$1" && find . -type d -printf '%P %T@\n' | sort)
}
make_file "$src/lib/sub/data" 70001
make_file "$src/bin/new" 1235
touch -d "2003-04-05 06:07:08" "$src/bin" "$src/lib/sub"
touch -d "2004-05-06 07:08:09" "$src/lib" "$src/empty"
chmod u+w "$src/ro" && touch -d "2005-06-07 08:09:10" "$src/ro" && chmod 555 "$src/ro"
touch -d "2006-07-08 09:10:11" "$src"
expect_status 0 "$RDMCP" -r -p --force "$src" "$(hosts 1)"
[ "$(dir_times "$src")" = "$(dir_times "$WORK/h1$src")" ] ||
	fail "-r -p --force: directory times: $(diff <(dir_times "$src") <(dir_times "$WORK/h1$src"))"
[ "$(stat -c %Y "$WORK/h1$src/lib/sub/data")" = "$(stat -c %Y "$src/lib/sub/data")" ] ||
	fail "-r -p --force: a file lost its time"
[ "$(cat "$WORK/h1$src/bin/mine")" = keep ] || fail "-p merge lost a file"
# -p -d DIR/ makes DIR with the time of the push, not 1970
prepare_dirs 1 /opt
expect_status 0 "$RDMCP" -p -d /opt/made/ "$src/secret" "$(hosts 1)"
[ "$(stat -c %Y "$WORK/h1/opt/made")" -gt 1000000000 ] ||
	fail "-p -d DIR/: DIR made with time $(stat -c %y "$WORK/h1/opt/made")"
note "-r -p --force onto an existing tree: $(dir_times "$src" | wc -l) directories with their source's times"

# a file where the tree has a directory: refused, the file untouched
rm -rf "$WORK/h2$src"
echo "i am a file" >"$WORK/h2$src"
expect_status 1 "$RDMCP" -r "$src" "$(hosts 2)"
grep -q "is a file, not a directory" "$WORK/out" || fail "$(cat "$WORK/out")"
[ "$(cat "$WORK/h2$src")" = "i am a file" ] || fail "file replaced"
# ... even with --force: a directory never replaces a file or vice versa
expect_status 1 "$RDMCP" -r --force "$src" "$(hosts 2)"
[ "$(cat "$WORK/h2$src")" = "i am a file" ] || fail "file replaced (force)"
mkdir -p "$WORK/h3/opt/dst/tool"
prepare_dirs 3 /opt/dst
expect_status 1 "$RDMCP" --force -d /opt/dst "$src/bin/tool" "$(hosts 3)"
grep -q "tool is a directory" "$WORK/out" || fail "$(cat "$WORK/out")"
[ -d "$WORK/h3/opt/dst/tool" ] || fail "directory replaced by a file"

# -d DIR must exist; -d DIR/ is made where missing (its parent must exist)
expect_status 1 "$RDMCP" -r -d /opt/new "$src" "$(hosts 1)"
grep -q "No such file or directory" "$WORK/out" || fail "$(cat "$WORK/out")"
expect_status 0 "$RDMCP" -r -d /opt/new/ "$src" "$(hosts 3)"
for i in 1 2 3; do
	diff -r --no-dereference "$src" "$WORK/h$i/opt/new/tree" >/dev/null ||
		fail "-d DIR/: host $i"
done
echo file >"$WORK/h1/opt/file"
expect_status 1 "$RDMCP" -d /opt/file/ "$src/secret" "$(hosts 1)"
grep -q "not a directory" "$WORK/out" || fail "$(cat "$WORK/out")"

# refused on the sender, nothing contacted: a directory without -r (a
# usage error), a FIFO or a socket inside the tree
expect_status 2 "$RDMCP" "$src" "$(hosts 1)"
grep -q "is a directory (-r copies directories)" "$WORK/err" || fail "$(cat "$WORK/err")"
mkfifo "$src/lib/fifo"
rm -rf "$WORK/h1$src"
expect_status 3 "$RDMCP" -r "$src" "$(hosts 1)"
grep -q "fifo is a FIFO" "$WORK/err" || fail "$(cat "$WORK/err")"
[ ! -e "$WORK/h1$src" ] || fail "a refused tree was written"
rm "$src/lib/fifo"
assert_no_temporaries
