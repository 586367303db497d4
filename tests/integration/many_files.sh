# SPDX-License-Identifier: MIT
# Several files in one command, one of them empty, with their modes (the
# executable bit above all); -d lands them all in one directory.
. "$(dirname "$0")/../lib.sh"
start_daemons 4
src=$WORK/src
mkdir -p "$src/sub"
make_file "$src/tool" 200000 && chmod 755 "$src/tool"
make_file "$src/secret" 5000 && chmod 600 "$src/secret"
make_file "$src/sub/conf" 70000 && chmod 640 "$src/sub/conf"
: >"$src/empty" && chmod 444 "$src/empty"
prepare_dirs 4 "$src"
prepare_dirs 4 "$src/sub"
expect_status 0 "$RDMCP" -b 4K --verify "$src/tool" "$src/secret" \
	"$src/sub/conf" "$src/empty" "$(hosts 4)"
for f in tool secret sub/conf empty; do
	assert_copies 4 "$src/$f"
done
[ -x "$(landed 2 "$src/tool")" ] || fail "the executable bit was lost"
# -d DIR: everything lands in DIR under its base name
prepare_dirs 4 /opt/stage
expect_status 0 "$RDMCP" -d /opt/stage "$src/tool" "$src/sub/conf" \
	"$(hosts 4)"
for i in 1 2 3 4; do
	cmp -s "$src/tool" "$WORK/h$i/opt/stage/tool" || fail "-d: host $i tool"
	cmp -s "$src/sub/conf" "$WORK/h$i/opt/stage/conf" || fail "-d: host $i conf"
	[ "$(stat -c %a "$WORK/h$i/opt/stage/tool")" = 755 ] || fail "-d: mode"
done
# two sources with one destination name are refused before anything moves
expect_status 2 "$RDMCP" -d /opt/stage "$src/tool" "$src/sub/../tool" \
	"$(hosts 4)"
assert_no_temporaries
# defaults from the environment: the port (hosts given without one) and -p
touch -d "2002-03-04 05:06:07" "$src/tool"
rm -f "$WORK"/h*/opt/stage/tool
RDMCP_PORT=$PORT RDMCP_PRESERVE=yes expect_status 0 "$RDMCP" -d /opt/stage \
	"$src/tool" "$(host_addr 1),$(host_addr 2)"
for i in 1 2; do
	[ "$(stat -c %Y "$WORK/h$i/opt/stage/tool")" = "$(stat -c %Y "$src/tool")" ] ||
		fail "RDMCP_PRESERVE: host $i"
done
