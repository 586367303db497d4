# SPDX-License-Identifier: MIT
# A changed file sends only what changed (issue 37, item 3), and the
# report is the disk:
#   - 3 blocks changed at scattered offsets: the group carries those 3
#     (the summary's "sent"), every copy equals the new source;
#   - nothing changed: identical, and the sender digests nothing;
#   - hosts with different old versions (one changed, one none, one a
#     shorter older copy) each get what they lack: the group carries the
#     union, the host that holds most goes first, the sender sends only
#     what that one lacks and the members pass on what they had, and
#     every copy is the source's;
#   - the file grown by a tail: the tail alone (and the block it ends);
#   - the file shrunk: nothing (the hosts hold every block);
#   - --whole-file (-W) sends every block whatever the hosts hold;
#   - a tree (-r) whose blocks span files, one file changed, one grown, one
#     new, with --verify: the blocks that hold a change; a file further
#     in the stream is taken from its own old copy;
#   - without --force a differing file is still refused, and kept.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
bs=65536
src=$WORK/src
mkdir -p "$src"
make_file "$src/data" $((128 * bs))
stage=$WORK/stage
prepare_dirs 3 "$stage"
# on I: host I's copy
on() {
	echo "$WORK/h$1$stage/data"
}
push() {
	expect_status "$1" "$RDMCP" --json -a chain -b "$bs" "${@:2}" -d "$stage/" \
		"$src/data" "$(hosts 3)"
}
# all_same: every host holds the source's bytes, and said ok
all_same() {
	local i
	for i in 1 2 3; do
		cmp -s "$src/data" "$(on "$i")" || fail "host $i: not the source's bytes ($1)"
		assert_json_ok "$1" "$i"
	done
	assert_no_temporaries
}
# change BLOCK: a few bytes of the source changed inside block BLOCK
change() {
	printf 'delta%s' "$1" | dd of="$src/data" bs=1 seek=$(($1 * bs + 1000)) \
		conv=notrunc status=none
}
# flip FILE OFFSET: the byte at OFFSET changed (a byte written there
# blindly is the one that was there once in 256 runs: a CI failure)
flip() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "\\$(printf %03o $(((b + 1) % 256)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
expect_sent() {
	local got
	got=$(json_sent)
	[ -n "$got" ] || fail "no summary: $(cat "$WORK/out")"
	[ "$got" -eq "$1" ] || fail "$2: sent $got bytes, want $1"
	note "$2: sent $got bytes"
}

push 0
expect_sent $((128 * bs)) "first push"
all_same "first push"

# three scattered blocks changed
change 5
change 64
change 127
push 0 --force -v
expect_sent $((3 * bs)) "3 blocks changed"
all_same "3 blocks changed"
[ "$(jq -s '[.[] | select(.event == "replica" and .reused == 125 * 65536 and .resumed == 0)] | length' \
	"$WORK/out")" = 3 ] || fail "reused: $(cat "$WORK/out")"
grep -q "digesting the sources' 128 blocks" "$WORK/err" ||
	fail "3 blocks changed: no word of the sender's digests: $(cat "$WORK/err")"

# nothing changed since: identical by the sums alone, and the sender
# digests no block (a file staged again, as a prolog does, costs it no
# block digests, only the whole files' sums)
push 0 --force -v
expect_sent 0 "unchanged"
[ "$(jq -s '[.[] | select(.event == "replica" and .identical)] | length' "$WORK/out")" = 3 ] ||
	fail "unchanged: not identical: $(cat "$WORK/out")"
! grep -q "digesting the sources'" "$WORK/err" ||
	fail "unchanged: the sender digested its sources: $(cat "$WORK/err")"

# different old versions: host 1 as it is but block 10 changed since,
# host 2 none, host 3 an older copy cut at 100 blocks, with block 50 changed
cp "$(on 3)" "$WORK/old3"
change 10
rm "$(on 2)"
head -c $((100 * bs)) "$WORK/old3" >"$(on 3)"
printf 'old' | dd of="$(on 3)" bs=1 seek=$((50 * bs)) conv=notrunc status=none
push 0 --force
# host 1 holds the most: it goes first, the sender sends it block 10, and
# it feeds host 2 the blocks it had (host 3 what it lacks)
expect_sent $((1 * bs)) "host 2 had nothing"
all_same "mixed versions"

# without host 2's lack: host 1 lacks block 20, host 3 blocks 30 and 100..127
change 20
cp "$src/data" "$WORK/v"
flip "$(on 3)" $((30 * bs))
truncate -s $((100 * bs)) "$(on 3)"
flip "$(on 1)" $((90 * bs))
# a dry run predicts what the sender will send: the first member's lack
expect_status 0 "$RDMCP" --json -n -a chain -b "$bs" --force -d "$stage/" \
	"$src/data" "$(hosts 3)"
[ "$(jq -s '.[-1].dry_run.send' "$WORK/out")" = $((1 * bs)) ] ||
	fail "dry run of the union: $(tail -1 "$WORK/out")"
push 0 --force -v
# the group carries block 20 (all), 30 (host 3), 90 (host 1), 100..127
# (host 3); host 2 lacks only block 20, so it goes first, the sender
# sends it that block alone, and the members pass the rest on
grep -q "31 of 128 blocks to send" "$WORK/err" ||
	fail "union: not 31 blocks carried: $(cat "$WORK/err")"
expect_sent $((1 * bs)) "the first member's lack"
all_same "union"

# grown by 10 %: the new tail only (the old last block was whole)
head -c $((13 * bs)) /dev/urandom >>"$src/data"
push 0 --force
expect_sent $((13 * bs)) "grown by 13 blocks"
all_same "grown"

# shrunk inside a block: nothing to send, every block is the start of
# the old copy
truncate -s $((100 * bs + 77)) "$src/data"
push 0 --force
expect_sent 0 "shrunk"
all_same "shrunk"

# --whole-file: every block again
change 3
push 0 --force -W
expect_sent $(stat -c %s "$src/data") "--whole-file"
all_same "--whole-file"

# a tree of small files in 4 KiB blocks that span them, with --verify
tree=$WORK/tree
mkdir -p "$tree/sub"
for f in a b c d; do make_file "$tree/sub/$f" 10000; done
tpush() {
	expect_status 0 "$RDMCP" --json -a chain -b 4096 --verify --force -r \
		-d "$stage/" "$tree" "$(hosts 3)"
}
tpush
flip "$tree/sub/b" 5000
head -c 3000 /dev/urandom >>"$tree/sub/c"
make_file "$tree/sub/e" 2000
tpush
# the stream: a 0..9999, b ..19999, c ..32999, d ..42999, e ..44999.
# Sent: b's block 3 (its byte at 15000), c's tail in blocks 7 and 8 (8
# also holds d's start), block 10 (d's end and e, new); d, 3000 bytes
# further in the stream, is taken from its own old copy: block 9 is d's.
expect_sent $((3 * 4096 + 45000 - 10 * 4096)) "tree"
for i in 1 2 3; do
	diff -r "$tree" "$WORK/h$i$stage/tree" >/dev/null || fail "host $i: the tree differs"
done
grep -c '"verified":true' "$WORK/out" | grep -qx 3 || fail "tree: not verified: $(cat "$WORK/out")"
assert_no_temporaries

# without --force a file that differs is refused, and kept as it is
cp "$(on 1)" "$WORK/kept1"
change 7
push 1
grep -q "exists and differs from the source (--force replaces it)" "$WORK/out" ||
	fail "no refusal: $(cat "$WORK/out")"
cmp -s "$WORK/kept1" "$(on 1)" || fail "host 1's file changed without --force"
assert_no_temporaries

# a dry run predicts what a delta would send, and sends nothing: blocks
# 12 and 90, and 7, changed above for the push that was refused
cp "$(on 1)" "$WORK/before"
change 12
change 90
expect_status 0 "$RDMCP" --json -n -a chain -b "$bs" --force -d "$stage/" \
	"$src/data" "$(hosts 3)"
[ "$(jq -s '.[-1].dry_run.send' "$WORK/out")" = $((3 * bs)) ] ||
	fail "dry run: $(tail -1 "$WORK/out")"
expect_sent 0 "dry run"
expect_status 0 "$RDMCP" -n -a chain -b "$bs" --force -d "$stage/" \
	"$src/data" "$(hosts 3)"
grep -q "^delta: 192.0 KiB would be sent" "$WORK/out" || fail "dry run: $(cat "$WORK/out")"
for i in 1 2 3; do
	cmp -s "$WORK/before" "$(on "$i")" || fail "host $i: changed by a dry run"
done
assert_no_temporaries
