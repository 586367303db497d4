# SPDX-License-Identifier: MIT
# Who owns what a root daemon creates, and set-ID bits: by default the
# owner of the --root it lands under, with --owner USER[:GROUP] that user,
# with --keep-owners and a sender's -p the sources' owners;
# set-user/group-ID bits only with --allow-setid; a daemon that is not
# root refuses --owner.
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
src=$WORK/src
mkdir -p "$src/tree/sub"
make_file "$src/tool" 5000 && chmod 4755 "$src/tool"
make_file "$src/tree/sub/f" 100
ln -s sub/f "$src/tree/link"
chmod 2775 "$src/tree/sub"
start_daemon 1
start_daemon 2 --owner daemon:daemon
start_daemon 3 --allow-setid
for i in 1 2 3; do
	wait_listening "$(host_addr "$i")" || fail "daemon $i did not start"
done
prepare_dirs 3 "$src"
chown nobody:nogroup "$WORK/h1"		# host 1's root
expect_status 0 "$RDMCP" -r "$src/tool" "$src/tree" "$(hosts 3)"

owners() {	# owners of every entry below DIR, one per line
	find "$1" -printf '%u:%g\n' | sort -u
}
[ "$(owners "$WORK/h1$src/tree")" = nobody:nogroup ] ||
	fail "host 1: $(find "$WORK/h1$src/tree" -printf '%p %u:%g\n')"
[ "$(stat -c %U:%G "$WORK/h1$src/tool")" = nobody:nogroup ] || fail "host 1 tool"
[ "$(owners "$WORK/h2$src/tree")" = daemon:daemon ] ||
	fail "host 2: $(find "$WORK/h2$src/tree" -printf '%p %u:%g\n')"
[ "$(stat -c %U:%G "$WORK/h2$src/tool")" = daemon:daemon ] || fail "host 2 tool"
# set-ID bits: dropped by default (after the owner changed too), kept
# with --allow-setid
[ "$(stat -c %a "$WORK/h1$src/tool")" = 755 ] || fail "host 1 kept set-uid"
[ "$(stat -c %a "$WORK/h2$src/tree/sub")" = 775 ] || fail "host 2 kept set-gid"
[ "$(stat -c %a "$WORK/h3$src/tool")" = 4755 ] || fail "host 3 dropped set-uid"
[ "$(stat -c %a "$WORK/h3$src/tree/sub")" = 2775 ] || fail "host 3 dropped set-gid"
# -p with a daemon that keeps owners: the sources' owners, as numbers;
# without -p, or with a daemon that does not, the daemon's rule
restart_daemon 3 --keep-owners
chown -h nobody:daemon "$src/tree/sub/f" "$src/tree/link"
chown daemon:nogroup "$src/tree/sub"
rm -rf "$WORK"/h*"$src"/tree
expect_status 0 "$RDMCP" -r -p "$src/tree" "$(hosts 3)"
want=$(cd "$src/tree" && find . -printf '%P %u:%g\n' | sort)
[ "$(cd "$WORK/h3$src/tree" && find . -printf '%P %u:%g\n' | sort)" = "$want" ] ||
	fail "host 3 -p: $(cd "$WORK/h3$src/tree" && find . -printf '%P %u:%g\n')"
[ "$(owners "$WORK/h2$src/tree")" = daemon:daemon ] ||
	fail "host 2 (no --keep-owners) took the sender's owners"
rm -rf "$WORK"/h*"$src"/tree
expect_status 0 "$RDMCP" -r "$src/tree" "$(hosts 3)"
[ "$(owners "$WORK/h3$src/tree")" = root:root ] ||
	fail "host 3 kept owners without -p: $(owners "$WORK/h3$src/tree")"
# --owner needs root
cp "$WORK/key" "$WORK/key4" && chown nobody "$WORK/key4"
chmod 755 "$WORK"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$RDMCP" --serve \
	--listen "$(host_addr 4):$PORT" --prefix "$WORK" --owner daemon \
	--key "$WORK/key4" >"$WORK/out" 2>"$WORK/err" && fail "nobody took --owner"
grep -q -- "--owner needs the daemon to run as root" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$RDMCP" --serve \
	--listen "$(host_addr 4):$PORT" --prefix "$WORK" --keep-owners \
	--key "$WORK/key4" >"$WORK/out" 2>"$WORK/err" && fail "nobody took --keep-owners"
grep -q -- "--keep-owners needs the daemon to run as root" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
expect_status 2 "$RDMCP" --serve --prefix "$WORK" --owner no-such-user-here
grep -q "unknown user" "$WORK/err" || fail "$(cat "$WORK/err")"
assert_no_temporaries
