# SPDX-License-Identifier: MIT
# The daemon writes only below its --root directories and says why not.
. "$(dirname "$0")/../lib.sh"
mkdir -p "$WORK/allowed" "$WORK/other"
"$RDMCP" --serve --listen "127.0.0.2:$PORT" --root "$WORK/allowed" \
	2>"$WORK/daemon1.log" &
DAEMON_PIDS[1]=$!
wait_listening 127.0.0.2 || fail "daemon"
echo hello >"$WORK/f"
expect_status 0 "$RDMCP" -d "$WORK/allowed" "$WORK/f" "127.0.0.2:$PORT"
cmp -s "$WORK/f" "$WORK/allowed/f" || fail "allowed"
expect_status 1 "$RDMCP" -d "$WORK/other" "$WORK/f" "127.0.0.2:$PORT"
grep -q "not under a --root" "$WORK/out" || fail "outside: $(cat "$WORK/out")"
[ ! -e "$WORK/other/f" ] || fail "wrote outside the root"
# a symlink inside the root leading out of it
ln -s "$WORK/other" "$WORK/allowed/escape"
expect_status 1 "$RDMCP" -d "$WORK/allowed/escape" "$WORK/f" "127.0.0.2:$PORT"
[ ! -e "$WORK/other/f" ] || fail "followed a symlink out of the root"
# a missing directory
expect_status 1 "$RDMCP" -d "$WORK/allowed/nope" "$WORK/f" "127.0.0.2:$PORT"
grep -q "No such file or directory" "$WORK/out" || fail "missing dir"
