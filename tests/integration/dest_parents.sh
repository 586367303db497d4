# SPDX-License-Identifier: MIT
# -d DIR/ makes DIR's missing parents too, as mkdir -p does, on each host
# from what that host has: a host that has some of them makes the rest;
# a dry run makes none; a host where an ancestor is a file fails, saying
# so, and makes nothing, while the others land.  (Before, only DIR itself
# was made: "destination directory ...: No such file or directory".)
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
make_file "$src/solver" 3000
make_file "$src/input.dat" 70000
stage=$WORK/stage
# host 2 has the stage and the job's directory, hosts 1 and 3 nothing
mkdir -p "$(landed 2 "$stage/job42")"

expect_status 0 "$RDMCP" -d "$stage/job42/in/" "$src/solver" "$src/input.dat" \
	"$(hosts 3)"
for i in 1 2 3; do
	for f in solver input.dat; do
		cmp -s "$src/$f" "$(landed "$i" "$stage/job42/in/$f")" ||
			fail "host $i: no $stage/job42/in/$f: $(cat "$WORK/out")"
	done
	for d in "$stage" "$stage/job42" "$stage/job42/in"; do
		[ "$(stat -c %a "$(landed "$i" "$d")")" = 755 ] ||
			fail "host $i: $d has mode $(stat -c %a "$(landed "$i" "$d")")"
	done
done
assert_no_temporaries

# a dry run checks that they could be made, and makes none
expect_status 0 "$RDMCP" -n -d "$stage/job43/a/b/" "$src/solver" "$(hosts 3)"
grep -q "3 of 3 hosts would take" "$WORK/out" || fail "dry run: $(cat "$WORK/out")"
[ ! -e "$(landed 1 "$stage/job43")" ] || fail "the dry run made $stage/job43"

# an ancestor that is a file on host 3: it fails, the others land
echo file >"$(landed 3 "$stage/job44")"
expect_status 1 "$RDMCP" --retries 0 -d "$stage/job44/x/y/" "$src/solver" "$(hosts 3)"
grep -q "^$(host_addr 3):$PORT: FAILED (1 host): .*Not a directory" "$WORK/out" ||
	fail "host 3: $(cat "$WORK/out")"
cmp -s "$src/solver" "$(landed 1 "$stage/job44/x/y/solver")" || fail "host 1: no copy"
[ "$(cat "$(landed 3 "$stage/job44")")" = file ] || fail "host 3: the file changed"
assert_no_temporaries
