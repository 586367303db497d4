# SPDX-License-Identifier: MIT
# A user who may write the destination directory swaps the job's
# temporary for a symbolic link to a file that is not theirs while the
# push runs (issue 40, item 1: a root daemon chmodded the link's target,
# renamed the link into place, and the sender said "ok").  The helper
# swaps every temporary it sees, in a loop bounded in time, once the first
# one exists.  Whatever the race gives, the victim keeps its mode and
# bytes, the final name never becomes a link, and the report is the disk:
# ok only where the host holds the file.
#
# A daemon keeps the copy of a job that did not land, its temporary open
# with its name gone (--keep-partial): a swapped name takes nothing from
# it.  So the retry of a host whose temporary was swapped may land at
# once, its blocks held already, before the helper looks again.  Part 1
# keeps no copy (--keep-partial 0): the retry sends every block again and
# its temporary is swapped too, so the host fails for good; part 2 keeps
# it, and the helper swaps one temporary only: the retry lands the kept
# copy, checked block by block against the sender's digests.
. "$(dirname "$0")/../lib.sh"
src=$WORK/src
make_file "$src" $((3 << 20))
chmod 0755 "$src"
victim=$WORK/victim		# root's (or the test user's), 0600
echo "secret" >"$victim"
chmod 0600 "$victim"
start_daemons 2 --keep-partial 0
prepare_dirs 2 "$WORK/job"
prepare_dirs 2 "$WORK/job2"
chmod 1777 "$WORK"/h[12]"$WORK"/job "$WORK"/h[12]"$WORK"/job2

# swapper DIR SECS [MAX]: until $WORK/stop-swapping exists, SECS pass or
# MAX temporaries were swapped (default: no bound), replace each
# temporary of DIR that is not a link yet by a link to the victim,
# atomically (rename), as the user could; each in $WORK/swapped.
swapper() {
	local dir=$1 end=$((SECONDS + $2)) max=${3:-0} n=0 t
	while [ "$SECONDS" -lt "$end" ] && [ ! -e "$WORK/stop-swapping" ]; do
		for t in "$dir"/.src.rdmcp-*; do
			[ -e "$t" ] && [ ! -L "$t" ] || continue
			ln -sfn "$victim" "$dir/.swap" && mv -T "$dir/.swap" "$t" &&
				echo "$t" >>"$WORK/swapped"
			n=$((n + 1))
			[ "$max" -eq 0 ] || [ "$n" -lt "$max" ] || return 0
		done
		sleep 0.005
	done
}

# victim_intact: the victim keeps its mode and bytes
victim_intact() {
	[ "$(stat -c %a "$victim")" = 600 ] ||
		fail "the victim's mode changed to $(stat -c %a "$victim")"
	[ "$(cat "$victim")" = secret ] || fail "the victim's bytes changed"
}

# links_left: the helper's links are left where it put them: not ours
# to remove
links_left() {
	local t
	for t in $(cat "$WORK/swapped"); do
		[ -L "$t" ] || fail "the daemon removed or replaced the user's link $t"
	done
}

# Part 1: no copy kept, every temporary of host 1 swapped.
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

victim_intact
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
links_left
rm -f "$WORK/h1$WORK/job"/.src.rdmcp-*

# Part 2: host 1 keeps the copy its first attempt made (the daemon's
# default), and only that attempt's temporary is swapped: the retry sends
# no block, and lands.
restart_daemon 1
rm -f "$WORK/swapped" "$WORK/stop-swapping"
swapper "$WORK/h1$WORK/job2" 60 1 &
swapping=$!
on_exit "touch $WORK/stop-swapping; wait $swapping"
rc=0
"$RDMCP" -v --bwlimit 2M -d "$WORK/job2/" "$src" "$(hosts 2)" \
	>"$WORK/out" 2>"$WORK/err" || rc=$?
touch "$WORK/stop-swapping"
wait "$swapping" || true
[ "$(wc -l <"$WORK/swapped")" -eq 1 ] ||
	fail "the helper swapped no temporary of the second push"
victim_intact
final1=$WORK/h1$WORK/job2/src
[ ! -L "$final1" ] || fail "host 1's final name is a link: $(ls -l "$final1")"
[ "$rc" -eq 0 ] || { cat "$WORK/out" "$WORK/err" >&2; fail "exit $rc, want 0"; }
grep -q "127.0.0.2.*replaced during the transfer.*will retry" "$WORK/err" ||
	{ cat "$WORK/err" >&2; fail "host 1's first attempt did not fail for its temporary"; }
grep -q "^127.0.0.2:$PORT .* ok .*3.0 MiB held already" "$WORK/out" ||
	{ cat "$WORK/out" >&2; fail "host 1's retry did not land the copy it kept"; }
grep -q "unfinished copy of its files kept from before: resuming" \
	"$WORK/daemon1.log" || fail "daemon 1 did not resume the copy it kept"
cmp -s "$src" "$final1" || fail "host 1 reported ok but does not hold the file"
cmp -s "$src" "$WORK/h2$WORK/job2/src" || fail "host 2 does not hold the file"
[ "$(host_lines ok "$WORK/out")" -eq 2 ] ||
	{ cat "$WORK/out" >&2; fail "want both hosts reported ok"; }
links_left
rm -f "$WORK/h1$WORK/job2"/.src.rdmcp-*
