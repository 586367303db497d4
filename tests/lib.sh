# Shared helpers for rdmcp's shell tests.  Source it; it sets `set -eu`,
# makes a scratch directory and removes it, and every daemon it started,
# when the test exits however it exits.

set -eu

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RDMCP=${RDMCP:-$TOP/rdmcp}
TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rdmcp-$TEST_NAME.XXXXXX")
# A port of our own, so tests never meet a demo or each other.
PORT=${RDMCP_TEST_PORT:-$((20000 + ($$ % 20000)))}
DAEMON_PIDS=()

cleanup() {
	local rc=$?
	for pid in "${DAEMON_PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${DAEMON_PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
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

# start_daemons N [extra options]: daemons for hosts 1..N on 127.0.0.2..,
# each writing below $WORK/hI (its --prefix).  Waits until all listen.
start_daemons() {
	local n=$1 i addr
	shift
	for i in $(seq 1 "$n"); do
		addr=$(host_addr "$i")
		mkdir -p "$WORK/h$i"
		"$RDMCP" --serve --listen "$addr:$PORT" --prefix "$WORK/h$i" \
			-v "$@" 2>>"$WORK/daemon$i.log" &
		DAEMON_PIDS[$i]=$!
	done
	for i in $(seq 1 "$n"); do
		wait_listening "$(host_addr "$i")" || fail "daemon $i did not start"
	done
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

kill_daemon() {
	kill -9 "${DAEMON_PIDS[$1]}" 2>/dev/null || true
	wait "${DAEMON_PIDS[$1]}" 2>/dev/null || true
}

# hosts N -> "127.0.0.2:P,...": the first N hosts.
hosts() {
	local i list=""
	for i in $(seq 1 "$1"); do
		list="$list${list:+,}$(host_addr "$i"):$PORT"
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

# expect_status WANT CMD...: run CMD, fail unless its status is WANT.
expect_status() {
	local want=$1 rc=0
	shift
	"$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		cat "$WORK/out" "$WORK/err" >&2
		fail "'$*' exited $rc, expected $want"
	fi
}
