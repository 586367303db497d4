# SPDX-License-Identifier: MIT
# A job of more blocks than the daemon allows (--max-blocks, default 2^24)
# is refused as soon as its JOB is read: the sender reports the daemon's
# reason, with the numbers and the block size that would do, for that
# host, exits as for a refused host (1) and does not send to it again;
# nothing is made on the daemon, not even the destination directory; and
# the daemon goes on serving.  The bound is exact, and across racks
# (--topology, -a binomial) blocks x members count, refused at START.
# (Before the cap, a 2 TiB sparse file in 512-byte blocks, 2^32 of them,
# held the daemon's loop for minutes on START: security issue 40.)
. "$(dirname "$0")/../lib.sh"
start_daemons 1
src=$WORK/src
mkdir -p "$src"
prepare_dirs 1 "$src"

# 2 TiB without data: 2^32 blocks of 512 bytes
truncate -s 2T "$src/huge" || { note "skipped: no 2 TiB sparse file here"; exit 77; }
RDMCP_CMD_LIMIT=60 expect_status 1 "$RDMCP" -v -S -b 512 -d "$src/huge-dst/" \
	"$src/huge" "$(hosts 1)"
want="a job of 4294967296 blocks is more than this daemon's --max-blocks 16777216: use --block-size 128K or more"
grep -qF "$(hosts 1): FAILED (1 host): $want" "$WORK/out" ||
	fail "no refusal with the daemon's reason: $(cat "$WORK/out" "$WORK/err")"
[ "$(grep -c "refused a job from .*: $want" "$WORK/daemon1.log")" = 1 ] ||
	fail "not one refusal in the daemon's log: $(tail -5 "$WORK/daemon1.log")"
grep -q "retry\|again" "$WORK/err" && fail "a refused host was sent to again: $(cat "$WORK/err")"
[ ! -e "$(landed 1 "$src/huge-dst")" ] ||
	fail "the refused job made $(find "$(landed 1 "$src/huge-dst")")"
[ -z "$(find "$(landed 1 "$src")" -mindepth 1 -print -quit)" ] ||
	fail "the refused job left $(find "$(landed 1 "$src")" -mindepth 1 | head -3)"
note "2^32 blocks refused: $want"

# the daemon still serves
make_file "$src/small" 300000
expect_status 0 "$RDMCP" "$src/small" "$(hosts 1)"
assert_copies 1 "$src/small"

# the bound is exact: 64 blocks go, 65 do not (and 2K blocks would)
restart_daemon 1 --max-blocks 64
make_file "$src/b64" $((64 * 1024))
make_file "$src/b65" $((64 * 1024 + 1))
expect_status 0 "$RDMCP" -b 1K "$src/b64" "$(hosts 1)"
assert_copies 1 "$src/b64"
expect_status 1 "$RDMCP" -b 1K "$src/b65" "$(hosts 1)"
grep -qF "a job of 65 blocks is more than this daemon's --max-blocks 64: use --block-size 2K or more" \
	"$WORK/out" || fail "65 blocks: $(cat "$WORK/out")"
[ ! -e "$(landed 1 "$src/b65")" ] || fail "65 blocks landed"
# a dry run says the same
expect_status 1 "$RDMCP" -n -b 1K "$src/b65" "$(hosts 1)"
grep -qF "more than this daemon's --max-blocks 64" "$WORK/out" ||
	fail "the dry run did not say it: $(cat "$WORK/out")"
assert_no_temporaries
note "--max-blocks 64: 64 blocks land, 65 are refused"

# across racks: the sender's rack, host 1's and host 2's, 3 members; 40
# blocks x 3 > 64, refused by both on START, for good: their temporaries
# go and no attempt follows
restart_daemon 1 --max-blocks 64
start_daemon 2 --max-blocks 64
wait_listening "$(host_addr 2)" || fail "daemon 2 did not start"
printf 'r1: %s\nr2: %s\n' "$(host_addr 1)" "$(host_addr 2)" >"$WORK/topology"
make_file "$src/racked" 40000
prepare_dirs 2 "$src"
expect_status 1 "$RDMCP" -a binomial --topology "$WORK/topology" -b 1K \
	"$src/racked" "$(hosts 2)"
want="a schedule across racks of 40 blocks for 3 members (120 blocks x members) is more than this daemon's --max-blocks 64: use --block-size 2K or more, or the chain (-a chain)"
grep -qF "FAILED (2 hosts): $want" "$WORK/out" ||
	fail "across racks: $(cat "$WORK/out" "$WORK/err")"
for i in 1 2; do
	[ "$(grep -c "job .* from " "$WORK/daemon$i.log")" -ge 1 ] || fail "no job on host $i"
	[ "$(grep -c "refused: $want" "$WORK/daemon$i.log")" = 1 ] ||
		fail "host $i did not refuse once: $(tail -3 "$WORK/daemon$i.log")"
	[ ! -e "$(landed "$i" "$src/racked")" ] || fail "host $i landed it"
done
for t in $(seq 1 100); do	# temporaries go on the next loop turn
	[ -z "$(find "$WORK"/h* -name '.*.rdmcp-*' | head -1)" ] && break
	sleep 0.05
done
assert_no_temporaries
# in 2K blocks it goes
expect_status 0 "$RDMCP" -a binomial --topology "$WORK/topology" -b 2K \
	"$src/racked" "$(hosts 2)"
assert_copies 2 "$src/racked"
note "across racks: 40 blocks x 3 members refused at --max-blocks 64, 20 x 3 land"
