# SPDX-License-Identifier: MIT
# --send-libs: an ELF executable travels with the shared libraries it
# needs, in DEST_libs/ next to it, where the loader finds them with
# LD_LIBRARY_PATH; the C library's own parts stay behind (they must match
# the nodes' loader); other files bring nothing.  The tool changed in one
# byte and staged again with --force: one block travels, the libraries
# the hosts hold already none (issue 37, item 5).
. "$(dirname "$0")/../lib.sh"
start_daemons 2
src=$WORK/src
mkdir -p "$src"
cp "$RDMCP" "$src/tool"
printf '#!/bin/sh\necho hi\n' >"$src/script" && chmod 755 "$src/script"
prepare_dirs 2 /opt
expect_status 0 "$RDMCP" --send-libs -d /opt/app/ "$src/tool" "$src/script" \
	"$(hosts 2)"
for i in 1 2; do
	libs=$WORK/h$i/opt/app/tool_libs
	cmp -s "$src/tool" "$WORK/h$i/opt/app/tool" || fail "host $i: tool"
	[ -d "$libs" ] || fail "host $i: no tool_libs"
	for lib in libuv.so.1 libnettle.so.8 libxxhash.so.0 libz.so.1; do
		[ -f "$libs/$lib" ] || fail "host $i: $lib not sent: $(ls "$libs")"
	done
	[ ! -e "$libs/libc.so.6" ] || fail "host $i: the C library was sent"
	# the loader takes them from there
	LD_LIBRARY_PATH=$libs ldd "$WORK/h$i/opt/app/tool" |
		grep -q "libuv.so.1 => $libs/libuv.so.1" ||
		fail "host $i: $(LD_LIBRARY_PATH=$libs ldd "$WORK/h$i/opt/app/tool")"
	[ ! -e "$WORK/h$i/opt/app/script_libs" ] || fail "a script got libs"
done
LD_LIBRARY_PATH=$WORK/h1/opt/app/tool_libs "$WORK/h1/opt/app/tool" --version |
	grep -q "^rdmcp " || fail "the copied tool does not run"
note "$(ls "$WORK/h1/opt/app/tool_libs" | wc -l) libraries sent with the tool"
assert_no_temporaries

# a new build of the tool, one byte changed: its block alone (a chain:
# the sender sends each block once)
b=$(od -An -tu1 -j 100000 -N1 "$src/tool" | tr -d ' ')
printf "\\$(printf %03o $(((b + 1) % 256)))" |
	dd of="$src/tool" bs=1 seek=100000 conv=notrunc status=none
expect_status 0 "$RDMCP" --send-libs --force --json -a chain -b 64K -d /opt/app/ \
	"$src/tool" "$src/script" "$(hosts 2)"
sent=$(json_sent)
[ "$sent" = 65536 ] || fail "the new build sent ${sent:-no summary} bytes, want its one changed block: $(cat "$WORK/out")"
for i in 1 2; do
	cmp -s "$src/tool" "$WORK/h$i/opt/app/tool" || fail "host $i: tool after the new build"
	assert_json_ok "after the new build" "$i"
done
note "new build, one byte changed: sent $sent bytes"
assert_no_temporaries
