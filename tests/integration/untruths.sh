# SPDX-License-Identifier: MIT
# Small untruths of the report found by an edge-case run (issue 39, item
# 0), each checked against what the hosts hold:
#   - a repeated -x keeps every list out, not only the last one;
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$WORK/stage"
make_file "$src/data" 100000

# -x twice: hosts 2 and 3 are both left out (the last -x alone left host
# 2 in, and wrote to it)
expect_status 0 "$RDMCP" -v -x "$(host_addr 2):$PORT" -x "$(host_addr 3):$PORT" \
	-d "$WORK/stage" "$src/data" "$(hosts 3)"
[ -f "$(landed 1 "$WORK/stage/data")" ] || fail "host 1 has no copy"
for i in 2 3; do
	[ ! -e "$(landed "$i" "$WORK/stage/data")" ] ||
		fail "-x -x: host $i was written to: $(cat "$WORK/out")"
done
grep -q "^1 of 1 replicas complete" "$WORK/out" || fail "$(cat "$WORK/out")"
