# SPDX-License-Identifier: MIT
# A receiver killed mid-transfer over verbs: the sender exits 1, names it,
# and no host has a partial file under the final name.
. "$(dirname "$0")/rlib.bash"
need_rxe 5
start_daemons 4 --transport verbs -v	# -vv: block events in the logs
src=$WORK/src
mkdir -p "$src"
prepare_dirs 4 "$src"
make_file "$src/data" $((96 << 20))
for victim in 2 4; do
	: >"$WORK/daemon$victim.log"
	rm -f "$WORK"/h*"$src"/data
	push --transport verbs -a chain -b 64K "$src/data" "$(hosts 4)" \
		>"$WORK/out" 2>&1 &
	pid=$!
	wait_event "block 1 from" "$WORK/daemon$victim.log" 20 \
		"a block reaching victim $victim"
	kill_daemon "$victim"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 1 ] || fail "victim $victim: exit $rc: $(cat "$WORK/out")"
	grep -q "$(host_addr "$victim"):$PORT *FAILED" "$WORK/out" ||
		fail "victim $victim not named: $(cat "$WORK/out")"
	for i in 1 2 3 4; do
		f=$(landed "$i" "$src/data")
		[ ! -e "$f" ] || cmp -s "$f" "$src/data" ||
			fail "host $i holds a partial file"
	done
	note "victim $victim: $(grep FAILED "$WORK/out" | head -2 | tr -s ' ' | cut -c1-110)"
	rm -f "$WORK/h$victim$src"/.data.rdmcp-*
	restart_daemon "$victim" -vv --transport verbs
done
