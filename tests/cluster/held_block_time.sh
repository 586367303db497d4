# SPDX-License-Identifier: MIT
# A member holds its PROGRESS while its last frame to the sender is
# unacknowledged (src/daemon/run.c, maybe_progress).  Here the sender's
# pure ACKs never reach the member, so every block of the push lands
# while the first PROGRESS waits for its ACK: the block time the member
# learnt must still reach the sender (link_rate in the report), sent as the
# blocks are all in.  Before that rule it never was (the concurrent test
# saw it once under ASan in CI, where a short push met a slow ACK).
. "$(dirname "$0")/../lib.sh"
need_root
cluster_up 2
cluster_daemons 2
src=$WORK/src
mkdir -p "$src" "$WORK/h2$src"
head -c $((16 << 10)) /dev/urandom >"$src/f"

# Host 1 sends no segment that is an ACK alone (IP length 52: 20 + 32
# with timestamps; flags ACK only): the member's frames are acknowledged
# only when the sender has data for it.
on_host 1 nft add table ip acks
on_host 1 nft add chain ip acks out '{ type filter hook output priority 0; }'
on_host 1 nft add rule ip acks out ip daddr "$(cluster_addr 2)" \
	ip length 52 tcp flags == ack counter drop

# Small pushes (16 blocks of 1 KiB) end within a loop turn or two, as the
# concurrent test's did under ASan: whether the member's first PROGRESS
# goes before or after the sender's last frame (its go, which carries an
# ACK) varies; each of six must report a block time.
for k in 1 2 3 4 5 6; do
	rm -f "$WORK/h2$src/f"
	expect_status 0 on_host 1 "$RDMCP" -b 1K --json "$src/f" "$(cluster_hosts 2)"
	cmp -s "$src/f" "$WORK/h2$src/f" || fail "push $k: host 2 holds no copy"
	rate=$(jq -rs '.[0].link_rate' "$WORK/out")
	[ "$rate" -gt 0 ] ||
		fail "push $k: no block time reached the sender: link_rate $rate"
done
dropped=$(on_host 1 nft list table ip acks | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
[ "${dropped:-0}" -gt 0 ] || fail "no ACK was dropped"
[ "$(grep -c "job .*: complete" "$WORK/daemon2.log")" -eq 6 ] ||
	fail "$(daemon_log_tail 2)"
note "6 pushes, each with a block time; $dropped ACKs dropped"
