# SPDX-License-Identifier: MIT
# A daemon with --prefix and no --state-dir keeps its records in the
# prefix (.rdmcp-state): killed with SIGKILL mid-push and started again the
# same way, it removes the temporary it left, and only what it recorded (a
# file that merely looks like a temporary stays); no job may write into
# that directory; a new push works.
. "$(dirname "$0")/../lib.sh"
src=$WORK/src
mkdir -p "$src"
prepare_dirs 1 "$src"
make_file "$src/big" $((40 << 20))
make_file "$src/small" 100000
decoy=$(landed 1 "$src/.decoy.rdmcp-0123abcd")

# start_plain: host 1's daemon as an administrator starts one of several
# on a machine: --prefix, no --state-dir (start_daemon gives one)
start_plain() {
	"${DAEMON_WRAP[@]}" "${ENV_WRAP[@]}" "$RDMCP" --serve -v \
		--listen "$(host_addr 1):$PORT" --prefix "$WORK/h1" \
		2>>"$WORK/daemon1.log" &
	DAEMON_PIDS[1]=$!
	wait_listening "$(host_addr 1)" || fail "daemon 1 did not start: $(daemon_log_tail 1)"
}

# temporaries: the rdmcp temporaries below host 1's prefix, the decoy aside
temporaries() {
	find "$WORK/h1" -name '.*.rdmcp-*' ! -name '.decoy.rdmcp-*'
}

start_plain
# slow enough (20 s) to be killed mid-push on any machine
"$RDMCP" --retries 0 --bwlimit 2M -b 64K "$src/big" "$(hosts 1)" \
	>"$WORK/push.out" 2>&1 &
pid=$!
on_exit "daemon_running $pid && kill -KILL $pid"
wait_blocks "$WORK/h1$src" 10
kill_daemon 1
for t in $(seq 1 200); do
	daemon_running "$pid" || break
	sleep 0.05
done
daemon_running "$pid" && fail "the sender still runs 10 s after its daemon died"
left=$(temporaries)
[ -n "$left" ] || fail "the killed daemon left no temporary to sweep"
echo "not rdmcp's" >"$decoy"	# named as ours, but never recorded

: >"$WORK/daemon1.log"
start_plain
for t in $(seq 1 200); do
	[ -z "$(temporaries)" ] && break
	sleep 0.05
done
[ -z "$(temporaries)" ] || fail "restarted, its temporaries remain: $(temporaries)"
grep -q "removed 1 temporaries left by jobs" "$WORK/daemon1.log" ||
	fail "the sweep is not logged: $(daemon_log_tail 1)"
[ -e "$decoy" ] || fail "a file that only looks like a temporary was removed"
[ -z "$(ls -A "$WORK/h1/.rdmcp-state")" ] ||
	fail "records left: $(ls -A "$WORK/h1/.rdmcp-state")"
[ ! -e "$(landed 1 "$src/big")" ] || fail "the killed push landed"
note "killed mid-push, started again: removed $left"

# the state directory is the daemon's alone
expect_status 1 "$RDMCP" --retries 0 -d /.rdmcp-state/ "$src/small" "$(hosts 1)"
grep -q "state directory, where no job may write" "$WORK/out" ||
	fail "a job into the state directory: $(cat "$WORK/out")"
[ -z "$(ls -A "$WORK/h1/.rdmcp-state")" ] ||
	fail "a job wrote into the state directory: $(ls -A "$WORK/h1/.rdmcp-state")"

expect_status 0 "$RDMCP" "$src/small" "$(hosts 1)"
assert_copies 1 "$src/small"
[ -z "$(temporaries)" ] || fail "temporaries after a push: $(temporaries)"
