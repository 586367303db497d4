# SPDX-License-Identifier: MIT
# Destination problems on single receivers: a full disk (found up front,
# by reserving the space), a read-only file system, a directory the daemon
# may not write.  That replica fails with the OS's words, the others
# complete, nothing is retried (sending again cannot help), no temporary
# is left, and the daemons keep serving.  Root: mounts and another user.
. "$(dirname "$0")/../lib.sh"
need_root
command -v setpriv >/dev/null || { echo "  $TEST_NAME: skipped: no setpriv"; exit 77; }
dst=/dst
for i in 1 2 3 4; do mkdir -p "$WORK/h$i$dst"; done
mount -t tmpfs -o size=1m rdmcp-full "$WORK/h1$dst"
on_exit umount -l "$WORK/h1$dst"
mount -t tmpfs -o size=16m,ro rdmcp-ro "$WORK/h2$dst"
on_exit umount -l "$WORK/h2$dst"
chmod 0755 "$WORK/h3$dst"		# root's; daemon 3 runs as nobody
start_daemons 2
# daemon 3 as nobody, with its own copy of the key
cp "$WORK/key" "$WORK/key3"
chown nobody "$WORK/key3"
chmod 711 "$WORK"
DAEMON_WRAP=(setpriv --reuid=nobody --regid=nogroup --clear-groups
	env RDMCP_KEY="$WORK/key3")
restart_daemon 3
DAEMON_WRAP=()
restart_daemon 4
src=$WORK/src
mkdir -p "$src"
make_file "$src/data" $((4 << 20))
expect_status 1 "$RDMCP" -v -d "$dst" "$src/data" "$(hosts 4)"
grep -q "$(host_addr 1):$PORT *FAILED.*No space left on device" "$WORK/out" ||
	fail "full disk: $(cat "$WORK/out")"
grep -q "$(host_addr 2):$PORT *FAILED.*Read-only file system" "$WORK/out" ||
	fail "read-only: $(cat "$WORK/out")"
grep -q "$(host_addr 3):$PORT *FAILED.*Permission denied" "$WORK/out" ||
	fail "permission: $(cat "$WORK/out")"
grep -q "$(host_addr 4):$PORT *ok" "$WORK/out" || fail "$(cat "$WORK/out")"
cmp -s "$src/data" "$WORK/h4$dst/data" || fail "host 4: bad copy"
note "$(grep FAILED "$WORK/out" | tr -s " " | cut -d" " -f1,5- | tr "\n" ";")"
! grep -q retrying "$WORK/err" || fail "retried: $(cat "$WORK/err")"
for i in 1 2 3; do
	[ -z "$(ls -A "$WORK/h$i$dst")" ] || fail "host $i: left $(ls -A "$WORK/h$i$dst")"
done
# still serving: a file that fits lands on the small disk
make_file "$src/small" 100000
expect_status 0 "$RDMCP" -d "$dst" "$src/small" "$(hosts 1),$(host_addr 4):$PORT"
cmp -s "$src/small" "$WORK/h1$dst/small" || fail "host 1: bad copy"
