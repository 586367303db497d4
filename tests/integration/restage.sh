# SPDX-License-Identifier: MIT
# Staging a job again after a node lost or damaged one of its files
# (issue 39, item 4), and identity by content with -p (item 0):
#   - a node missing solver, whose input.dat is identical, gets solver and
#     keeps its input.dat as it is (it failed: "input.dat exists (--force
#     replaces it)");
#   - a node whose input.dat was damaged fails naming input.dat, the file
#     that really differs (it named solver, the job's first file); with
#     --force input.dat is replaced and solver, identical, kept;
#   - with -p, "already identical" is decided by content, never by sizes
#     and times alone: a copy with 4 bytes changed and its time put back
#     differs (it was "already identical"); a source whose time alone
#     changed is identical, and the copies get its time, with or without
#     --force (they kept the old one).
# Every ok and FAILED is checked against what each host holds.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
make_file "$src/solver" 300000
make_file "$src/input.dat" 500000
chmod 0755 "$src/solver"
stage=$WORK/stage
prepare_dirs 3 "$stage"
files=("$src/solver" "$src/input.dat")
push() {
	expect_status "$1" "$RDMCP" -v "${@:2}" -d "$stage/" "${files[@]}" "$(hosts 3)"
}
# on I FILE: host I's copy of FILE in the stage
on() {
	echo "$WORK/h$1$stage/$2"
}
# same I FILE: host I holds the source's FILE, byte for byte
same() {
	cmp -s "$src/$2" "$(on "$1" "$2")" || fail "host $1: $2 is not the source's"
}
inode() {
	stat -c %i "$(on "$1" "$2")"
}
line() {
	grep "^$(host_addr "$1"):$PORT " "$WORK/out" || true
}

push 0
for i in 1 2 3; do same "$i" solver; same "$i" input.dat; done

# node 2 lost solver; node 3's input.dat was damaged, its size kept
rm "$(on 2 solver)"
input2=$(inode 2 input.dat)
printf 'XXXX' | dd of="$(on 3 input.dat)" bs=1 seek=1000 conv=notrunc 2>/dev/null
cp "$(on 3 input.dat)" "$WORK/damaged"
solver3=$(inode 3 solver)
push 1
line 1 | grep -q " ok .*already identical" || fail "host 1: $(cat "$WORK/out")"
line 2 | grep -q " ok " || fail "host 2: $(cat "$WORK/out" "$WORK/err")"
same 2 solver
same 2 input.dat
[ "$(inode 2 input.dat)" = "$input2" ] || fail "host 2: its identical input.dat was rewritten"
line 3 | grep -q " FAILED .*$stage/input.dat exists and differs from the source (--force replaces it)" ||
	fail "host 3 does not name input.dat: $(cat "$WORK/out")"
cmp -s "$WORK/damaged" "$(on 3 input.dat)" || fail "host 3: input.dat changed without --force"
same 3 solver
note "$(line 3)"

# a dry run says the same, and changes nothing
rm "$(on 2 solver)"
expect_status 1 "$RDMCP" -n -d "$stage/" "${files[@]}" "$(hosts 3)"
grep -q "^$(host_addr 2):$PORT: ok, would take it" "$WORK/out" || fail "-n: $(cat "$WORK/out")"
grep -q "^$(host_addr 3):$PORT: FAILED (1 host): $stage/input.dat exists and differs" "$WORK/out" ||
	fail "-n: $(cat "$WORK/out")"
[ ! -e "$(on 2 solver)" ] || fail "-n made solver on host 2"
push 1

# --force: what differs is replaced, what is identical kept
push 0 --force
line 3 | grep -q " ok " || fail "host 3 with --force: $(cat "$WORK/out")"
for i in 1 2 3; do same "$i" solver; same "$i" input.dat; done
[ "$(inode 3 solver)" = "$solver3" ] || fail "host 3: its identical solver was rewritten"
assert_no_temporaries

# -p: identical by content, not by size and time (fresh copies with the
# sources' times first)
rm -f "$WORK"/h*"$stage"/*
push 0 -p
printf 'ZZZZ' | dd of="$(on 1 input.dat)" bs=1 seek=2000 conv=notrunc 2>/dev/null
touch -r "$src/input.dat" "$(on 1 input.dat)"	# its time put back
push 1 -p
line 1 | grep -q " FAILED .*$stage/input.dat exists and differs from the source" ||
	fail "-p: a changed copy with its time put back: $(cat "$WORK/out")"
line 2 | grep -q " ok .*already identical" || fail "-p: host 2: $(cat "$WORK/out")"
push 0 -p --force
same 1 input.dat

# -p: the source's time alone changed: identical, and the copies get it
for force in "" --force; do
	touch -d "@$((1700000000 + RANDOM))" "$src/input.dat"
	push 0 -p $force
	[ "$(grep -c " ok .*already identical" "$WORK/out")" = 3 ] ||
		fail "-p, a new time: $(cat "$WORK/out")"
	for i in 1 2 3; do
		[ "$(stat -c %Y "$(on "$i" input.dat)")" = "$(stat -c %Y "$src/input.dat")" ] ||
			fail "-p ${force:-without --force}: host $i kept the old time"
		same "$i" input.dat
	done
done
assert_no_temporaries
