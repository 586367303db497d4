# SPDX-License-Identifier: MIT
# --topology: the hosts go in rack order (each rack's hosts take
# consecutive ranks, racks in order of first appearance), the algorithm
# is chain unless -a says otherwise, hosts of no rack come last with a
# warning; a bad topology file is a usage error that contacts nobody.
. "$(dirname "$0")/../lib.sh"
start_daemons 6
src=$WORK/src
mkdir -p "$src"
prepare_dirs 6 "$src"
make_file "$src/data" $((5 * 65536 + 7))

# rank_of I: the rank host I's daemon got in its latest job
rank_of() {
	sed -n 's/.*: rank \([0-9]*\) of .*/\1/p' "$WORK/daemon$1.log" | tail -1
}

# assert_ranks I...: hosts I... hold ranks 1, 2, ... in that order
assert_ranks() {
	local want=1 i got
	for i in "$@"; do
		got=$(rank_of "$i")
		[ "$got" = "$want" ] ||
			fail "host $i has rank '$got', want $want ($(cat "$WORK/err"))"
		want=$((want + 1))
	done
}

# Hosts 1, 3, 5 in rack A (the short form), 2, 4, 6 in rack B (Slurm's
# form); the line naming the switch above them is skipped.
cat >"$WORK/topo" <<EOF
# two racks
A: $(host_addr 1),$(host_addr 3),$(host_addr 5)
SwitchName=B Nodes=127.0.0.[$((2 + 1)),$((4 + 1)),$((6 + 1))] LinkSpeed=1
SwitchName=top Switches=A,B
EOF
expect_status 0 "$RDMCP" -v --topology "$WORK/topo" "$src/data" "$(hosts 6)"
assert_copies 6 "$src/data"
assert_ranks 1 3 5 2 4 6
grep -q "rack A: 3 hosts" "$WORK/err" || fail "no rack A line: $(cat "$WORK/err")"
grep -q "rack B: 3 hosts" "$WORK/err" || fail "no rack B line: $(cat "$WORK/err")"
grep -q "binomial" "$WORK/daemon1.log" &&
	fail "--topology without -a should run the chain: $(tail -3 "$WORK/daemon1.log")"
grep -q ", chain," "$WORK/daemon1.log" ||
	fail "no chain job: $(tail -3 "$WORK/daemon1.log")"

# Rack B listed first in the host list goes first, each rack's hosts in
# the list's order; host 6 is in no rack: it comes last, with a warning;
# -a binomial is kept.  (A new file: identical copies are not sent again.)
make_file "$src/data2" 70000
cat >"$WORK/topo2" <<EOF
A: $(host_addr 1),$(host_addr 3),$(host_addr 5)
B: $(host_addr 2),$(host_addr 4)
EOF
expect_status 0 "$RDMCP" -v -a binomial --topology "$WORK/topo2" \
	"$src/data2" "$(host_list host_addr 2 6),$(hosts 1)"
assert_copies 6 "$src/data2"
assert_ranks 2 4 3 5 1 6
grep -q "warning: 1 host is in no rack" "$WORK/err" ||
	fail "no warning for the host in no rack: $(cat "$WORK/err")"
grep -q ", binomial," "$WORK/daemon1.log" ||
	fail "-a binomial was not kept: $(tail -3 "$WORK/daemon1.log")"
# the sender (in no rack here), racks B and A, and host 6: four racks
grep -q "binomial pipeline in 4 racks" "$WORK/err" ||
	fail "no pipeline across racks: $(cat "$WORK/err")"

# The topology on standard input ('-'), as scontrol show topology writes
# it; not when standard input is also a source.
make_file "$src/data3" 3000
printf 'SwitchName=A Level=0 LinkSpeed=1 Nodes=127.0.0.[2,4,6]\nSwitchName=B Level=0 LinkSpeed=1 Nodes=127.0.0.[3,5,7]\n' >"$WORK/scontrol"
expect_status 0 sh -c 'exec "$@" <"$0"' "$WORK/scontrol" "$RDMCP" \
	--topology - "$src/data3" "$(hosts 6)"
assert_copies 6 "$src/data3"
assert_ranks 1 3 5 2 4 6
expect_status 2 sh -c 'exec "$@" <"$0"' "$WORK/scontrol" "$RDMCP" \
	--topology - --name d4 - "$(hosts 6)"
grep -q "cannot be both a source (-) and the topology" "$WORK/err" ||
	fail "stdin twice: $(cat "$WORK/err")"

# --plan --racks -a binomial prints that schedule: each block crosses
# from the first rack (ranks 0-2) into the second once, to its first
# rank (3).  (Without -a it is the chain, as --topology's: untruths.sh.)
"$RDMCP" --plan -a binomial --racks 3,4 --blocks 16 >"$WORK/plan" ||
	fail "--plan --racks"
crossing=$(awk '!/^#/ && $2 < 3 && $3 >= 3' "$WORK/plan")
[ "$(echo "$crossing" | wc -l)" -eq 16 ] || fail "crossings: $crossing"
[ -z "$(echo "$crossing" | awk '$3 != 3')" ] || fail "not to rank 3: $crossing"
[ "$(echo "$crossing" | cut -f4 | sort -n | uniq | wc -l)" -eq 16 ] ||
	fail "a block crossed twice: $crossing"
grep -q "^# steps [0-9]* hosts 7 blocks 16 algorithm binomial racks 3,4$" \
	"$WORK/plan" || fail "plan header: $(tail -1 "$WORK/plan")"

# A bad file: exit 2, the file and line named, no host contacted.
jobs_before=$(cat "$WORK"/daemon*.log | grep -c " from " || true)
printf 'A: %s\nthis is not a rack\n' "$(host_addr 1)" >"$WORK/bad"
expect_status 2 "$RDMCP" --force --topology "$WORK/bad" "$src/data" "$(hosts 6)"
grep -q "bad, line 2" "$WORK/err" || fail "no line number: $(cat "$WORK/err")"
printf 'A: %s\nB: %s\n' "$(host_addr 1)" "$(host_addr 1)" >"$WORK/twice"
expect_status 2 "$RDMCP" --force --topology "$WORK/twice" "$src/data" "$(hosts 6)"
grep -q "listed twice" "$WORK/err" || fail "host twice: $(cat "$WORK/err")"
expect_status 2 "$RDMCP" --force --topology "$WORK/none" "$src/data" "$(hosts 6)"
grep -q "cannot read topology file" "$WORK/err" || fail "missing: $(cat "$WORK/err")"
jobs_after=$(cat "$WORK"/daemon*.log | grep -c " from " || true)
[ "$jobs_before" = "$jobs_after" ] || fail "a bad topology contacted hosts"
assert_no_temporaries
