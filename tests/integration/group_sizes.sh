# SPDX-License-Identifier: MIT
# 1, 2, 3, 5, 8 and 13 hosts: every one ends with the file; the report has
# one line per host and a summary.
. "$(dirname "$0")/../lib.sh"
start_daemons 13
src=$WORK/src
mkdir -p "$src"
prepare_dirs 13 "$src"
make_file "$src/data" $((3 * 1048576 + 12345))
for n in 1 2 3 5 8 13; do
	rm -f "$WORK"/h*"$src"/data
	expect_status 0 "$RDMCP" -v "$src/data" "$(hosts "$n")"
	assert_copies "$n" "$src/data"
	[ "$(host_lines ok "$WORK/out")" -eq "$n" ] ||
		fail "$n hosts: $(host_lines ok "$WORK/out") ok lines"
	[ "$(grep -c ": ok ($n host" "$WORK/out")" -eq 1 ] ||
		fail "$n hosts: no grouped line: $(cat "$WORK/out")"
	grep -q "^$n of $n replicas complete" "$WORK/out" ||
		fail "$n hosts: bad summary: $(tail -1 "$WORK/out")"
	# hosts beyond n got nothing
	[ "$n" -eq 13 ] || [ ! -e "$(landed $((n + 1)) "$src/data")" ] ||
		fail "host $((n + 1)) got a copy it was not sent"
done
assert_no_temporaries
