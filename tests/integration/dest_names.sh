# SPDX-License-Identifier: MIT
# Where sources land with -d: under the base name of their clean
# absolute path, so that a trailing slash (what tab completion adds), "."
# and ".." name the directory itself; a missing -d directory is named
# with the way to make it.
. "$(dirname "$0")/../lib.sh"
start_daemons 2
src=$WORK/src
mkdir -p "$src/tree/sub"
make_file "$src/tree/a" 3000
make_file "$src/tree/sub/b" 70000
prepare_dirs 2 /data

# same_tree I DEST: host I holds the source tree at DEST
same_tree() {
	diff -r "$src/tree" "$(landed "$1" "$2")" >/dev/null ||
		fail "host $1: $2 is not the source tree: $(find "$WORK/h$1/data" | sed "s|$WORK/h$1||" | tr '\n' ' ')"
}

# a trailing slash on the source changes nothing: /data/tree
expect_status 0 "$RDMCP" -r -d /data "$src/tree/" "$(hosts 2)"
for i in 1 2; do same_tree "$i" /data/tree; done
[ ! -e "$WORK/h1/data/a" ] || fail "tree/ landed its contents in /data"
note "-d /data tree/ -> /data/tree"

# ".": the current directory, under its own name
(cd "$src/tree" && expect_status 0 "$RDMCP" -r -d /data/dot/ . "$(hosts 2)")
for i in 1 2; do same_tree "$i" /data/dot/tree; done
note "-d /data/dot/ . -> /data/dot/tree"

# "..", from below: the parent, under its name
(cd "$src/tree/sub" && expect_status 0 "$RDMCP" -r -d /data/up/ .. "$(hosts 2)")
for i in 1 2; do same_tree "$i" /data/up/tree; done
note "-d /data/up/ .. -> /data/up/tree"

# "/" has no base name: a usage error, nothing contacted
expect_status 2 "$RDMCP" -r -d /data / "$(hosts 2)"
grep -q "no destination for '/'" "$WORK/err" || fail "/: $(cat "$WORK/err")"

# a missing -d directory: the reason says how to make it
expect_status 1 "$RDMCP" -v -d /nodir "$src/tree/a" "$(hosts 2)"
for i in 1 2; do
	grep -q "^$(host_addr "$i"):$PORT *FAILED.*destination directory .*/nodir: No such file or directory (-d DIR/, with a trailing slash, makes it" "$WORK/out" ||
		fail "missing -d directory: $(cat "$WORK/out")"
done
expect_status 0 "$RDMCP" -d /nodir/ "$src/tree/a" "$(hosts 2)"
for i in 1 2; do
	cmp -s "$src/tree/a" "$(landed "$i" /nodir/a)" || fail "host $i: no /nodir/a"
done
assert_no_temporaries
