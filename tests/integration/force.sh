# SPDX-License-Identifier: MIT
# An existing destination is never replaced without --force; a directory in
# the way is never replaced at all; nothing else is touched.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
make_file "$src/data" 300000
echo "precious" >"$(landed 2 "$src/data")"
expect_status 1 "$RDMCP" "$src/data" "$(hosts 3)"
grep -q "FAILED.*exists and differs from the source (--force replaces it)" "$WORK/out" ||
	fail "no clear reason: $(cat "$WORK/out")"
[ "$(cat "$(landed 2 "$src/data")")" = precious ] || fail "replaced without --force"
# the other hosts completed
cmp -s "$src/data" "$(landed 1 "$src/data")" || fail "host 1 not complete"
cmp -s "$src/data" "$(landed 3 "$src/data")" || fail "host 3 not complete"
grep -q "failed: 127.0.0.3:$PORT" "$WORK/err" || fail "no failed-host line"
expect_status 0 "$RDMCP" --force "$src/data" "$(hosts 3)"
assert_copies 3 "$src/data"
# a directory where the file should go
rm -f "$(landed 1 "$src/data")" && mkdir "$(landed 1 "$src/data")"
expect_status 1 "$RDMCP" --force "$src/data" "$(hosts 1)"
grep -q "is a directory" "$WORK/out" || fail "directory: $(cat "$WORK/out")"
[ -d "$(landed 1 "$src/data")" ] || fail "the directory was replaced"
assert_no_temporaries
