# SPDX-License-Identifier: MIT
# The sender killed mid-transfer: every receiver discards its temporaries
# within the keepalive timeout, no final file appears, and the daemons go
# on serving.
. "$(dirname "$0")/../lib.sh"
start_daemons 4
src=$WORK/src
mkdir -p "$src"
prepare_dirs 4 "$src"
make_file "$src/data" $((200 << 20))
"$RDMCP" -a chain -b 64K "$src/data" "$(hosts 4)" >"$WORK/out" 2>&1 &
pid=$!
# kill once the last of the chain has joined the running group
wait_event "rank [0-9]* of" "$WORK/daemon4.log" 10 "host 4 joining the group"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
# the control connections break at once: temporaries go quickly
for t in $(seq 1 100); do
	left=$(find "$WORK"/h* -name '.*.rdmcp-*' | head -1)
	[ -z "$left" ] && break
	sleep 0.05
done
[ -z "$left" ] || fail "temporaries left after the sender died: $left"
for i in 1 2 3 4; do
	[ ! -e "$(landed "$i" "$src/data")" ] || fail "host $i has a final file"
done
# (each daemon ends its job on whichever loss reaches it first: the
# sender's, or that of a neighbour that ended its own job already)
grep -Eq "the sender went away|: failed: lost connection to rank" \
	"$WORK/daemon1.log" ||
	fail "daemon 1 did not notice: $(tail -3 "$WORK/daemon1.log")"
# still serving
make_file "$src/small" 100000
expect_status 0 "$RDMCP" "$src/small" "$(hosts 4)"
assert_copies 4 "$src/small"
