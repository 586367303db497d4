# SPDX-License-Identifier: MIT
# --bwlimit caps what each member sends: a push cannot beat the cap (the
# sender sends every byte at least once), whatever the schedule; a bare
# number is KiB/s as in rsync; a bad rate is a usage error.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
make_file "$src/data" 3145728

# copies_in DIR: hosts 1..3 hold the source as DIR/data
copies_in() {
	local i
	for i in 1 2 3; do
		cmp -s "$src/data" "$(landed "$i" "$1/data")" || fail "host $i holds no copy in $1"
	done
}

# seconds CMD...: run CMD (expect_status 0) and print how long it took
seconds() {
	local t0 t1
	t0=$(date +%s%N)
	expect_status 0 "$@"
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}

# 3 MiB at 1 MiB/s (1024 KiB/s): the first block may go at once, every
# other byte waits for its share: at least (3 MiB - 1 MiB block) / rate
t=$(seconds "$RDMCP" --bwlimit 1024 -d "$src/a/" "$src/data" "$(hosts 3)")
copies_in "$src/a"
awk -v t="$t" 'BEGIN { exit !(t >= 1.9) }' || fail "binomial under 1 MiB/s took only $t s"
note "binomial, 3 MiB, --bwlimit 1024 (KiB/s): $t s"

# sequential: the sender sends the file 3 times, so at least 3 x 3 MiB - 1
# block at 2 MiB/s
t=$(seconds "$RDMCP" --bwlimit 2M -a sequential -d "$src/b/" "$src/data" "$(hosts 3)")
copies_in "$src/b"
awk -v t="$t" 'BEGIN { exit !(t >= 3.9) }' || fail "sequential under 2 MiB/s took only $t s"
note "sequential, 3 x 3 MiB, --bwlimit 2M: $t s"

expect_status 2 "$RDMCP" --bwlimit 5X "$src/data" "$(hosts 1)"
grep -q "bad rate '5X'" "$WORK/err" || fail "bad rate: $(cat "$WORK/err")"
assert_no_temporaries
