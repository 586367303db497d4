# SPDX-License-Identifier: MIT
# Shared helpers for rdmcp's shell tests.  Source it; it sets `set -eu`,
# makes a scratch directory and removes it, and every daemon it started,
# when the test exits however it exits.  Every daemon still running then
# must exit 0 on SIGTERM (a clean shutdown: no crash, no handle left open,
# under valgrind no leak), or the test fails with the daemon's log tail;
# only daemons the test killed on purpose (kill_daemon) are exempt.

set -eu

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RDMCP=${RDMCP:-$TOP/rdmcp}
TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rdmcp-$TEST_NAME.XXXXXX")
# A port of our own, so tests never meet a demo or each other, and below
# Linux's ephemeral range (32768 on): a listen on a port some connection
# of another test holds as its local end fails with EADDRINUSE.
PORT=${RDMCP_TEST_PORT:-$((10000 + ($$ % 22000)))}
DAEMON_PIDS=()		# by host; a daemon killed on purpose is unset
EXIT_HOOKS=()
# the shared key that daemons and senders of this test prove they hold
"$RDMCP" -q --genkey "$WORK/key"
export RDMCP_KEY=$WORK/key

# on_exit CMD...: run CMD when the test ends (before the scratch directory
# goes), in reverse order of registration.
on_exit() {
	EXIT_HOOKS=("$*" "${EXIT_HOOKS[@]}")
}

cleanup() {
	local rc=$? hook i
	for i in "${!DAEMON_PIDS[@]}"; do
		signal_daemon "$i" TERM
	done
	for i in "${!DAEMON_PIDS[@]}"; do
		reap_daemon "$i" "${DAEMON_STOP_LIMIT:-60}" ||
			{ [ "$rc" -ne 0 ] || rc=1; }
	done
	{
		for hook in "${EXIT_HOOKS[@]}"; do
			eval "$hook" || true
		done
	} 2>/dev/null
	if [ "$rc" -ne 0 ] && [ -n "${KEEP_WORK:-}" ]; then
		echo "kept $WORK" >&2
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
	echo "FAIL: $TEST_NAME: $*" >&2
	exit 1
}

note() {
	echo "  $TEST_NAME: $*"
}

# host_addr I -> 127.0.0.(I+1): host 1 is 127.0.0.2.
host_addr() {
	echo "127.0.0.$(($1 + 1))"
}

# start_daemon I [options]: a daemon for host I on its address, writing
# below $WORK/hI (its --prefix), recording its jobs' temporaries in
# $WORK/stateI, logging to $WORK/daemonI.log; run under
# the command in DAEMON_WRAP if set (e.g. to lower a limit), then under
# the words of $RDMCP_DAEMON_WRAP (e.g. valgrind: make check-valgrind).
DAEMON_WRAP=()
read -ra ENV_WRAP <<<"${RDMCP_DAEMON_WRAP:-}"
start_daemon() {
	local i=$1
	shift
	mkdir -p "$WORK/h$i"
	"${DAEMON_WRAP[@]}" "${ENV_WRAP[@]}" "$RDMCP" --serve --listen "$(host_addr "$i"):$PORT" \
		--prefix "$WORK/h$i" --state-dir "$WORK/state$i" -v "$@" \
		2>>"$WORK/daemon$i.log" &
	DAEMON_PIDS[$i]=$!
}

# start_daemons N [extra options]: daemons for hosts 1..N on 127.0.0.2..,
# each writing below $WORK/hI (its --prefix).  Waits until all listen.
start_daemons() {
	local n=$1 i
	shift
	for i in $(seq 1 "$n"); do
		start_daemon "$i" "$@"
	done
	for i in $(seq 1 "$n"); do
		wait_listening "$(host_addr "$i")" || fail "daemon $i did not start"
	done
}

# restart_daemon I [options]: stop host I's daemon if it runs (it must stop
# cleanly), start a new one with these options and wait until it listens.
restart_daemon() {
	stop_daemon "$1"
	start_daemon "$@"
	wait_listening "$(host_addr "$1")" || fail "daemon $1 did not restart"
}

# wait_listening ADDR: until something accepts on ADDR:$PORT (5 s at most).
wait_listening() {
	local t
	for t in $(seq 1 100); do
		if (exec 3<>"/dev/tcp/$1/$PORT") 2>/dev/null; then
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# kill_daemon I: kill host I's daemon (SIGKILL), on purpose: its exit is
# not checked.
kill_daemon() {
	[ -n "${DAEMON_PIDS[$1]:-}" ] || return 0
	{
		kill -9 "${DAEMON_PIDS[$1]}" || true
		wait "${DAEMON_PIDS[$1]}" || true
	} 2>/dev/null
	unset "DAEMON_PIDS[$1]"
}

# stop_daemon I: stop host I's daemon with SIGTERM; it must exit 0 (see
# reap_daemon), else the test fails.
stop_daemon() {
	[ -n "${DAEMON_PIDS[$1]:-}" ] || return 0
	signal_daemon "$1" TERM
	reap_daemon "$1" "${DAEMON_STOP_LIMIT:-60}" ||
		fail "daemon $1 did not stop cleanly"
}

# daemon_running PID: PID is a process this shell started and that has not
# exited; never true of a stranger that reuses the pid (bash reaps its
# children as they exit, keeping their status for `wait`).
daemon_running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }	# past "pid (comm) ": state, ppid, ...
	set -- $stat
	[ "$1" != Z ] && [ "$2" = "$BASHPID" ]
}

# signal_daemon I SIG: send SIG to host I's daemon if it still runs (a
# frozen one also gets SIGCONT, so that it can act on it; others get no
# SIGCONT, which upsets LeakSanitizer's stop-the-world at exit).
signal_daemon() {
	local pid=${DAEMON_PIDS[$1]:-}
	[ -n "$pid" ] && daemon_running "$pid" || return 0
	kill "-$2" "$pid" 2>/dev/null || true
	if [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" = T ]; then
		kill -CONT "$pid" 2>/dev/null || true
	fi
}

# reap_daemon I SECS: wait up to SECS for host I's daemon, signalled
# already, to exit, and forget it.  Status 1, after saying why and
# printing its log's tail, if it exited non-zero (also on its own before
# it was signalled: a crash) or had to be killed.
reap_daemon() {
	local i=$1 pid=${DAEMON_PIDS[$1]:-} t rc=0
	[ -n "$pid" ] || return 0
	for t in $(seq 1 $(($2 * 20))); do
		daemon_running "$pid" || break
		sleep 0.05
	done
	if daemon_running "$pid"; then
		echo "FAIL: $TEST_NAME: daemon $i (pid $pid) still runs $2 s after SIGTERM; killed" >&2
		kill -KILL "$pid" 2>/dev/null || true
		rc=1
	fi
	wait "$pid" 2>/dev/null || rc=$?
	unset "DAEMON_PIDS[$i]"
	[ "$rc" -ne 0 ] || return 0
	echo "FAIL: $TEST_NAME: daemon $i (pid $pid) exited with status $rc after SIGTERM, not 0" >&2
	daemon_log_tail "$i" >&2
	return 1
}

# daemon_log_tail I: the last lines of host I's daemon log.
daemon_log_tail() {
	local f=$WORK/daemon$1.log
	[ -e "$f" ] || { echo "--- (no $f)"; return 0; }
	echo "--- $(basename "$f") (last 30 lines)"
	tail -n 30 "$f"
}

# hosts N -> "127.0.0.2:P,...": the first N hosts.
hosts() {
	host_list host_addr 1 "$1"
}

# host_list ADDR_FN FROM TO -> "ADDR:PORT,..." for hosts FROM..TO.
host_list() {
	local i list=""
	for i in $(seq "$2" "$3"); do
		list="$list${list:+,}$("$1" "$i"):$PORT"
	done
	echo "$list"
}

# landed I PATH -> where host I keeps PATH.
landed() {
	echo "$WORK/h$1$2"
}

# prepare_dirs N DIR: DIR exists on hosts 1..N.
prepare_dirs() {
	local i
	for i in $(seq 1 "$1"); do
		mkdir -p "$WORK/h$i$2"
	done
}

# make_file PATH SIZE: SIZE pseudo-random bytes.
make_file() {
	head -c "$2" /dev/urandom >"$1"
}

# assert_copies N SRC: hosts 1..N hold exactly SRC (content and mode).
# assert_ok_copies SRC DEST I...: hosts I each reported ok in $WORK/out
# and hold SRC's bytes at DEST (a path as the push named it).
assert_ok_copies() {
	local src=$1 dest=$2 i
	shift 2
	for i in "$@"; do
		grep -q "^$(host_addr "$i"):$PORT *ok" "$WORK/out" ||
			fail "host $i not ok: $(cat "$WORK/out")"
		cmp -s "$src" "$(landed "$i" "$dest")" ||
			fail "host $i reported ok, its copy differs"
	done
}

# json_sent: the block bytes the last push sent, from its --json summary
# in $WORK/out (empty without one).
json_sent() {
	sed -n 's/.*"event":"summary".*"sent":\([0-9]*\).*/\1/p' "$WORK/out"
}

# assert_json_ok WHAT I...: the --json report in $WORK/out says hosts I
# ok (WHAT: the push, for the message).
assert_json_ok() {
	local what=$1 i
	shift
	for i in "$@"; do
		grep -q "\"host\":\"$(host_addr "$i"):$PORT\",[^}]*\"ok\":true" "$WORK/out" ||
			fail "host $i not reported ok ($what): $(cat "$WORK/out")"
	done
}

# assert_not_landed DEST I...: hosts I hold nothing at DEST (a path as
# the push named it).
assert_not_landed() {
	local dest=$1 i
	shift
	for i in "$@"; do
		[ ! -e "$(landed "$i" "$dest")" ] || fail "host $i holds $dest"
	done
}

assert_copies() {
	local i dst
	for i in $(seq 1 "$1"); do
		dst=$(landed "$i" "$2")
		[ -f "$dst" ] || fail "host $i has no $2"
		cmp -s "$2" "$dst" || fail "host $i holds other bytes for $2"
		[ "$(stat -c %a "$2")" = "$(stat -c %a "$dst")" ] ||
			fail "host $i: mode $(stat -c %a "$dst"), want $(stat -c %a "$2")"
	done
}

# assert_no_temporaries: no .*.rdmcp-* left anywhere below the hosts.
assert_no_temporaries() {
	local left
	left=$(find "$WORK" -path "$WORK/h*" -name '.*.rdmcp-*' 2>/dev/null | head -5)
	[ -z "$left" ] || fail "temporaries left: $left"
}

# host_lines OUTCOME FILE: how many per-host report lines (-v) of FILE
# say OUTCOME (ok or FAILED); the grouped lines ("LIST: ok (...)") do not
# count.
host_lines() {
	grep -cE "^[^ ]+ +$1 +[0-9.]+ s" "$2" || true
}

# expect_status WANT CMD...: run CMD, fail unless its status is WANT.  A
# watchdog ends CMD after RDMCP_CMD_LIMIT seconds (default 240): rdmcp must
# end by itself, so this only turns a hang into a failure that says where
# it hung, with the daemons' logs, instead of the runner's blunt timeout.
expect_status() {
	local want=$1 rc=0 pid dog
	shift
	"$@" >"$WORK/out" 2>"$WORK/err" &
	pid=$!
	watchdog "$pid" "${RDMCP_CMD_LIMIT:-240}" "$*" &
	dog=$!
	wait "$pid" || rc=$?
	# SIGKILL: a TERM could reach the watchdog's subshell before it has
	# reset the traps it inherited, and run this test's cleanup there
	kill -KILL "$dog" 2>/dev/null || true
	wait "$dog" 2>/dev/null || true
	if [ -e "$WORK/hung" ]; then
		cat "$WORK/out" "$WORK/err" >&2
		dump_daemon_logs >&2
		fail "'$*' still running after ${RDMCP_CMD_LIMIT:-240} s"
	fi
	if [ "$rc" -ne "$want" ]; then
		cat "$WORK/out" "$WORK/err" >&2
		fail "'$*' exited $rc, expected $want"
	fi
}

# wait_grep PATTERN FILE SECS: until FILE has a line matching PATTERN
# (grep -E is not used: a basic regular expression); status 1 if it has
# none after SECS seconds.
wait_grep() {
	local t
	for t in $(seq 1 $(($3 * 50))); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.02
	done
	grep -q -- "$1" "$2" 2>/dev/null
}

# watchdog PID SECS WHAT: after SECS, mark the test hung and kill PID and
# its children (a shell function's subshell runs rdmcp as its child).
watchdog() {
	local t
	for t in $(seq 1 "$(($2 * 10))"); do
		sleep 0.1
		kill -0 "$1" 2>/dev/null || return 0
	done
	touch "$WORK/hung"
	pkill -ABRT -P "$1" 2>/dev/null || true
	sleep 1
	pkill -KILL -P "$1" 2>/dev/null || true
	kill -KILL "$1" 2>/dev/null || true
}

# dump_daemon_logs: the last lines of every daemon's log.
dump_daemon_logs() {
	local f
	for f in "$WORK"/daemon*.log; do
		[ -e "$f" ] || continue
		echo "--- $(basename "$f") (last 30 lines)"
		tail -n 30 "$f"
	done
}

# wait_exit PID SECS: until the child PID has exited, its status then in
# RC; fails, with the end of $WORK/err and $WORK/*.out, if it still runs
# after SECS.
wait_exit() {
	local t
	for t in $(seq 1 $(($2 * 20))); do
		if ! kill -0 "$1" 2>/dev/null; then
			RC=0
			wait "$1" || RC=$?
			return 0
		fi
		sleep 0.05
	done
	fail "pid $1 still running after $2 s: $(tail -n 5 "$WORK/err" "$WORK"/*.out 2>/dev/null)"
}

# wait_event PATTERN FILE SECS WHAT: wait_grep, or fail saying that WHAT
# never happened, with FILE's tail.  A fault is injected on the event it
# needs, never after a guessed delay: when the event does not come, the
# checks that follow would prove nothing.
wait_event() {
	wait_grep "$1" "$2" "$3" && return 0
	fail "$4 did not happen within $3 s (no '$1' in $(basename "$2")): $(tail -n 5 "$2" 2>/dev/null)"
}

# wait_job_ended I [SECS]: host I's daemon log says its job ended
# (failed, its sender gone, or ended by it) within SECS (20).
wait_job_ended() {
	wait_event "job [0-9a-f]*: \(failed\|the sender went away\|ended by\)" \
		"$WORK/daemon$1.log" "${2:-20}" "host $1 ending its job"
}

# wait_receiving I DIR: host I's daemon runs a job and a block has landed
# in a temporary below DIR (a path as the push named it): the moment to
# inject a fault there.
wait_receiving() {
	wait_event "rank [0-9]* of" "$WORK/daemon$1.log" 10 "host $1 running the job"
	wait_blocks "$WORK/h$1$2" 10
}

# freeze_daemon I: stop host I's daemon (SIGSTOP: its kernel still takes
# connections); it gets SIGCONT when the test ends, however it ends.
freeze_daemon() {
	on_exit "kill -CONT ${DAEMON_PIDS[$1]}"
	kill -STOP "${DAEMON_PIDS[$1]}"
}

# wait_blocks DIR SECS: until a temporary below DIR holds data (a block
# has landed in it: the transfer is under way there); fails after SECS.
wait_blocks() {
	local t f
	for t in $(seq 1 $(($2 * 20))); do
		for f in $(find "$1" -name '.*.rdmcp-*' -type f 2>/dev/null); do
			# a non-zero byte: space is reserved, so size tells nothing
			[ -n "$(tr -d '\000' <"$f" 2>/dev/null | head -c 1)" ] &&
				return 0
		done
		sleep 0.05
	done
	# say what there was, for a failure that does not reproduce
	find "$1" -ls 2>/dev/null | tail -n 20 >&2
	for f in "$WORK/out" "$WORK/err" "$WORK"/daemon*.log; do
		if [ -s "$f" ]; then
			echo "--- $f" >&2
			tail -n 15 "$f" >&2
		fi
	done
	fail "no block landed below $1 within $2 s"
}

# ---------------------------------------------------------------------
# Clusters of network namespaces (root only)

# need_root: skip the test (status 77) unless we may build namespaces.
need_root() {
	if [ "$(id -u)" -ne 0 ] || ! ip netns list >/dev/null 2>&1; then
		echo "  $TEST_NAME: skipped: needs root for network namespaces"
		exit 77
	fi
}

# cluster_up N [RATE]: hosts 1..N (see scripts/netns-cluster.sh), removed
# when the test ends.  Host 1 sends; daemons run on hosts 2..N.
cluster_up() {
	export RDMCP_NS="rdt$$"
	on_exit "$TOP/scripts/netns-cluster.sh" down
	"$TOP/scripts/netns-cluster.sh" up "$@"
}

on_host() {
	local i=$1
	shift
	"$TOP/scripts/netns-cluster.sh" exec "$i" "$@"
}

cluster_addr() {
	"$TOP/scripts/netns-cluster.sh" addr "$1"
}

# cluster_daemons N [options]: daemons on hosts 2..N, landing below
# $WORK/hI; waits until they listen.
cluster_daemons() {
	local n=$1 i
	shift
	for i in $(seq 2 "$n"); do
		mkdir -p "$WORK/h$i"
		# a plain command, so that $! is the daemon itself (the script
		# and ip netns exec both exec)
		"$TOP/scripts/netns-cluster.sh" exec "$i" "$RDMCP" --serve -v \
			--listen "$(cluster_addr "$i"):$PORT" --prefix "$WORK/h$i" \
			"$@" 2>>"$WORK/daemon$i.log" &
		DAEMON_PIDS[$i]=$!
	done
	for i in $(seq 2 "$n"); do
		cluster_wait_port "$i" "$PORT" ||
			fail "daemon $i did not start: $(daemon_log_tail "$i")"
	done
}

# cluster_wait_port I PORT: until host I accepts connections on PORT, as
# seen from host 1 (5 s at most; status 1 if it never does).
cluster_wait_port() {
	local t
	for t in $(seq 1 100); do
		on_host 1 bash -c "exec 3<>/dev/tcp/$(cluster_addr "$1")/$2" \
			2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# cluster_hosts N -> the daemons of hosts 2..N as a host list.
cluster_hosts() {
	host_list cluster_addr 2 "$1"
}
