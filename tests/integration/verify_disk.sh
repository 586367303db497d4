# SPDX-License-Identifier: MIT
# --verify checks the copy that lands, end to end as the man page says,
# not the blocks as they arrived (issue 39, item 0): bytes changed in a
# temporary after their block arrived and before the rename passed as
# "verified", and the host held other bytes than the source.  Now the
# daemon reads its temporaries back once every block is in: the host
# fails with a checksum mismatch and nothing lands under the final name.
. "$(dirname "$0")/../lib.sh"
start_daemons 2
src=$WORK/src
make_file "$src" $((3 << 20))
prepare_dirs 2 "$WORK/stage"
dir1=$WORK/h1$WORK/stage

# wait_past_block0 DIR SECS: until host 1's temporary holds data at
# 512 KiB, well past its first 256 KiB block, which has all arrived
wait_past_block0() {
	local t f
	for t in $(seq 1 $(($2 * 50))); do
		for f in "$1"/.src.rdmcp-*; do
			[ -f "$f" ] || continue
			[ -n "$(dd if="$f" bs=4096 skip=128 count=1 2>/dev/null |
				tr -d '\000' | head -c 1)" ] && { echo "$f"; return 0; }
		done
		sleep 0.02
	done
	return 1
}

# ~1.5 s at 2 MiB/s in 256 KiB blocks, host 1 last in the chain (it
# passes nothing on); --retries 0: the one attempt
"$RDMCP" -v --verify --retries 0 --bwlimit 2M -b 256K -a chain \
	-d "$WORK/stage" "$src" "$(host_addr 2):$PORT,$(host_addr 1):$PORT" \
	>"$WORK/out" 2>"$WORK/err" &
pid=$!
tmp=$(wait_past_block0 "$dir1" 20) || fail "no block landed past the first on host 1"
# change 4 bytes of the first block, long after it arrived
printf 'XXXX' | dd of="$tmp" bs=1 seek=100 conv=notrunc 2>/dev/null ||
	fail "cannot write into $tmp"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 1 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "exit $rc, want 1"; }
grep -q "^$(host_addr 1):$PORT *FAILED .*checksum mismatch: the copy on disk has [0-9a-f]*, the sender's [0-9a-f]*" \
	"$WORK/out" || fail "host 1: $(cat "$WORK/out" "$WORK/err")"
[ ! -e "$dir1/src" ] || fail "host 1 failed but holds $(cmp "$src" "$dir1/src")"
# host 2, untouched, is verified and holds the source's bytes
grep -q "^$(host_addr 2):$PORT *ok .*verified" "$WORK/out" ||
	fail "host 2: $(cat "$WORK/out")"
cmp -s "$src" "$WORK/h2$WORK/stage/src" || fail "host 2 holds other bytes"
assert_no_temporaries
