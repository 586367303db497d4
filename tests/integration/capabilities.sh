# SPDX-License-Identifier: MIT
# A daemon running as root with only the capabilities that the systemd
# unit's header suggests (read from the unit itself, so that what it
# documents is what is tested): it writes into a job directory that a user
# owns and keeps to himself, gives what it creates to the owner of its
# root, and replaces another user's file in a sticky directory with
# --force.  Without CAP_CHOWN (what the documentation said before: issue
# 40, item 8) a push fails with a reason naming it, and leaves nothing.
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: needs setpriv"; exit 77; }
caps=$(sed -n 's/^#[[:space:]]*CapabilityBoundingSet=//p' \
	"$TOP/contrib/systemd/rdmcp.service.in")
[ -n "$caps" ] || fail "the unit suggests no CapabilityBoundingSet="
# "CAP_A CAP_B" -> "-all,+cap_a,+cap_b", setpriv's way
bounding() {
	local set=-all c
	for c in "$@"; do
		set="$set,+$(echo "${c#CAP_}" | tr 'A-Z' 'a-z')"
	done
	echo "$set"
}
note "the unit suggests: $caps"

src=$WORK/src
mkdir -p "$src/tree/sub"
make_file "$src/tool" 70000 && chmod 0750 "$src/tool"
make_file "$src/tree/sub/f" 5000
chmod 0700 "$src/tree/sub"
job=$WORK/job		# a user's own job directory, 0700
sticky=$WORK/sticky	# a world-writable scratch directory
start_root_daemon() {
	DAEMON_WRAP=(setpriv --bounding-set="$1" --inh-caps=-all)
	restart_daemon 1
	DAEMON_WRAP=()
}
mkdir -p "$WORK/h1$job" "$WORK/h1$sticky"
chown nobody:nogroup "$WORK/h1"			# the root, its owner's
chown daemon:daemon "$WORK/h1$job" && chmod 0700 "$WORK/h1$job"
chmod 1777 "$WORK/h1$sticky"
echo old >"$WORK/h1$sticky/tool" && chown daemon: "$WORK/h1$sticky/tool"

# shellcheck disable=SC2086  # the words of the unit's set
start_root_daemon "$(bounding $caps)"
grep -q "^CapBnd:" "/proc/${DAEMON_PIDS[1]}/status" || fail "no daemon"
expect_status 0 "$RDMCP" -r -d "$job/" "$src/tool" "$src/tree" "$(host_addr 1):$PORT"
for f in tool tree tree/sub tree/sub/f; do
	got=$WORK/h1$job/$f
	[ "$(stat -c %U:%G "$got")" = nobody:nogroup ] ||
		fail "$f belongs to $(stat -c %U:%G "$got"), not the root's owner"
	[ "$(stat -c %a "$got")" = "$(stat -c %a "$src/$f")" ] ||
		fail "$f: mode $(stat -c %a "$got"), want $(stat -c %a "$src/$f")"
done
cmp -s "$src/tool" "$WORK/h1$job/tool" || fail "tool differs"
cmp -s "$src/tree/sub/f" "$WORK/h1$job/tree/sub/f" || fail "tree/sub/f differs"
# --force over another user's file in a sticky directory (CAP_FOWNER)
expect_status 0 "$RDMCP" --force -d "$sticky/" "$src/tool" "$(host_addr 1):$PORT"
cmp -s "$src/tool" "$WORK/h1$sticky/tool" || fail "the sticky file was not replaced"

# without CAP_CHOWN: refused with the reason, nothing left
rm -rf "${WORK:?}/h1$job"/*
start_root_daemon "$(bounding CAP_DAC_OVERRIDE CAP_FOWNER)"
expect_status 1 "$RDMCP" -r --retries 0 -d "$job/" "$src/tool" "$src/tree" \
	"$(host_addr 1):$PORT"
grep -q "needs CAP_CHOWN" "$WORK/out" ||
	fail "the reason does not name CAP_CHOWN: $(cat "$WORK/out")"
[ -z "$(ls -A "$WORK/h1$job")" ] || fail "left: $(ls -A "$WORK/h1$job")"

# The unit as shipped: an unprivileged daemon (User=rdmcp, no
# capabilities) asked to write into a job directory that a user owns is
# refused with "Permission denied" and the drop-in that lets it (issue
# 39, item 7), the set the unit suggests; nothing is left.  (On the build
# before it said "Permission denied" alone.)
stop_daemon 1
rm -rf "${WORK:?}/h1$job"/*
chmod 0755 "$WORK/h1$job"	# the user's, readable, not writable by others
chmod 0711 "$WORK"
mkdir -p "$WORK/state1"
chown nobody:nogroup "$WORK/state1"
install -m 0600 -o nobody "$WORK/key" "$WORK/nobody.key"
DAEMON_WRAP=(setpriv --reuid nobody --regid nogroup --clear-groups
	--inh-caps=-all --bounding-set=-all)
restart_daemon 1 --key "$WORK/nobody.key"
DAEMON_WRAP=()
for dry in "" -n; do
	expect_status 1 "$RDMCP" $dry --retries 0 -d "$job/" "$src/tool" \
		"$(host_addr 1):$PORT"
	grep -qF "Permission denied (this daemon's user may not write there; for directories that users own, run it as root with only $caps, as rdmcp.service's header shows)" \
		"$WORK/out" || fail "no hint${dry:+ with $dry}: $(cat "$WORK/out")"
done
[ -z "$(ls -A "$WORK/h1$job")" ] || fail "left: $(ls -A "$WORK/h1$job")"
# where the daemon's user may write (its root, its own), it writes
expect_status 0 "$RDMCP" -d /staged/ "$src/tool" "$(host_addr 1):$PORT"
[ "$(stat -c %U "$WORK/h1/staged/tool")" = nobody ] || fail "staged as $(stat -c %U "$WORK/h1/staged/tool")"

# The roots are named twice under systemd, in RDMCP_OPTS and in
# ReadWritePaths= (which expands no variables); a root that the second
# misses is read-only to the daemon: it says so when it starts, and a
# push there says what to add.  (A read-only bind mount in a mount
# namespace of its own stands for ProtectSystem=strict.)
stop_daemon 1
DAEMON_WRAP=(unshare --mount --propagation private sh -c
	'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
	"$WORK/h1")
restart_daemon 1
DAEMON_WRAP=()
grep -q "warning: root $WORK/h1 is read-only here: nothing can land there (under systemd, the unit's ReadWritePaths= must list it too)" \
	"$WORK/daemon1.log" || fail "no warning: $(tail -5 "$WORK/daemon1.log")"
expect_status 1 "$RDMCP" --retries 0 -d /staged/ "$src/tree/sub/f" "$(host_addr 1):$PORT"
grep -qF "Read-only file system (under systemd, the unit's ReadWritePaths= must list the daemon's --root directories too)" \
	"$WORK/out" || fail "no hint: $(cat "$WORK/out")"
