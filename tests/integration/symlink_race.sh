# SPDX-License-Identifier: MIT
# A user who may write the destination directory swaps the job's
# temporary for a symbolic link to a file that is not theirs while the
# push runs (issue 40, item 1: a root daemon chmodded the link's target,
# renamed the link into place, and the sender said "ok").  The helper
# swaps every temporary it sees, in a loop bounded in time, once the first
# one exists.  Whatever the race gives, the victim keeps its mode and
# bytes, the final name never becomes a link, and the report is the disk:
# ok only where the host holds the file.
. "$(dirname "$0")/../lib.sh"
src=$WORK/src
make_file "$src" $((3 << 20))
chmod 0755 "$src"
victim=$WORK/victim		# root's (or the test user's), 0600
echo "secret" >"$victim"
chmod 0600 "$victim"
start_daemons 2
prepare_dirs 2 "$WORK/job"
chmod 1777 "$WORK/h1$WORK/job" "$WORK/h2$WORK/job"

# swapper DIR SECS: until $WORK/stop-swapping exists or SECS pass, replace
# each temporary of DIR that is not a link yet by a link to the victim,
# atomically (rename), as the user could.
swapper() {
	local dir=$1 end=$((SECONDS + $2)) t
	while [ "$SECONDS" -lt "$end" ] && [ ! -e "$WORK/stop-swapping" ]; do
		for t in "$dir"/.src.rdmcp-*; do
			[ -e "$t" ] && [ ! -L "$t" ] || continue
			ln -sfn "$victim" "$dir/.swap" && mv -T "$dir/.swap" "$t" &&
				echo "$t" >>"$WORK/swapped"
		done
		sleep 0.005
	done
}
swapper "$WORK/h1$WORK/job" 60 &
swapping=$!
on_exit "touch $WORK/stop-swapping; wait $swapping"

# ~1.5 s at 2 MiB/s: time enough for the helper to find the temporary;
# host 2, whose group broke, is sent to again (--retries 1)
rc=0
"$RDMCP" -v --bwlimit 2M -d "$WORK/job/" "$src" "$(hosts 2)" \
	>"$WORK/out" 2>"$WORK/err" || rc=$?
touch "$WORK/stop-swapping"
wait "$swapping" || true
[ -s "$WORK/swapped" ] || fail "the helper never saw a temporary to swap"
note "swapped $(wc -l <"$WORK/swapped") temporary(ies); sender exit $rc"

[ "$(stat -c %a "$victim")" = 600 ] ||
	fail "the victim's mode changed to $(stat -c %a "$victim")"
[ "$(cat "$victim")" = secret ] || fail "the victim's bytes changed"
final1=$WORK/h1$WORK/job/src
[ ! -L "$final1" ] || fail "host 1's final name is a link: $(ls -l "$final1")"
# host 1: its temporary was replaced before it landed, so it failed, said
# why, and holds nothing under the final name
[ "$rc" -eq 1 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "exit $rc, want 1"; }
grep -q "127.0.0.2.*replaced during the transfer" "$WORK/out" "$WORK/err" ||
	{ cat "$WORK/out" "$WORK/err" >&2; fail "host 1's reason does not say its temporary was replaced"; }
[ ! -e "$final1" ] || fail "host 1 failed but holds $final1"
grep -q "replaced during the transfer" "$WORK/daemon1.log" ||
	fail "daemon 1 did not log the replacement"
# host 2, untouched, holds the file, as reported
cmp -s "$src" "$WORK/h2$WORK/job/src" || fail "host 2 does not hold the file"
[ "$(host_lines ok "$WORK/out")" -eq 1 ] ||
	{ cat "$WORK/out" >&2; fail "want exactly one host reported ok"; }
# the helper's link is left where it put it: not ours to remove
for t in $(cat "$WORK/swapped"); do
	[ -L "$t" ] || fail "the daemon removed or replaced the user's link $t"
done
rm -f "$WORK/h1$WORK/job"/.src.rdmcp-*
