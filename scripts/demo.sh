#!/usr/bin/env bash
# demo.sh - rdmcp in one minute, no root needed (what 'make demo' runs).
#
# Starts 8 receiving daemons on 127.0.0.2 .. 127.0.0.9 (each with its own
# --prefix, so they act as 8 separate machines), pushes a 64 MiB file of
# random data to all of them at once with --verify, shows rdmcp's report,
# then checks with cmp that every copy is identical to the source.
# Everything lives in a scratch directory that is removed at the end; the
# daemons are stopped however the script ends.
#
# Settings (environment): RDMCP_DEMO_PORT (default 7471).
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RDMCP=$TOP/rdmcp
PORT=${RDMCP_DEMO_PORT:-7471}
HOSTS=(2 3 4 5 6 7 8 9)		# 127.0.0.N
SIZE_MIB=64
DIR=
PIDS=()		# daemons
SENDER=		# the push, while it runs

say() { echo "demo: $*"; }
die() { echo "demo: FAILED: $*" >&2; exit 1; }

cleanup() {
	local rc=$? pid t alive
	trap - EXIT INT TERM
	if [ -n "$SENDER" ]; then
		kill -TERM "$SENDER" 2>/dev/null || true
		wait "$SENDER" 2>/dev/null || true
	fi
	if [ ${#PIDS[@]} -gt 0 ]; then
		kill -TERM "${PIDS[@]}" 2>/dev/null || true
		# give them 5 s to remove temporaries and exit, then insist
		for t in $(seq 1 50); do
			alive=0
			for pid in "${PIDS[@]}"; do
				kill -0 "$pid" 2>/dev/null && alive=1
			done
			[ "$alive" -eq 0 ] && break
			sleep 0.1
		done
		kill -KILL "${PIDS[@]}" 2>/dev/null || true
		for pid in "${PIDS[@]}"; do
			wait "$pid" 2>/dev/null || true
		done
	fi
	[ -n "$DIR" ] && rm -rf "$DIR"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# listening ADDR: something accepts TCP connections on ADDR:$PORT
listening() {
	(exec 3<>"/dev/tcp/$1/$PORT") 2>/dev/null
}

# show_log N: the last lines a daemon logged, after a failure
show_log() {
	[ -f "$DIR/h$1.log" ] && sed 's/^/    /' "$DIR/h$1.log" | tail -5 >&2
	return 0
}

[ -x "$RDMCP" ] || die "$RDMCP is missing (run 'make')"
case $PORT in
'' | *[!0-9]*) die "RDMCP_DEMO_PORT must be a port number" ;;
esac

DIR=$(mktemp -d "${TMPDIR:-/tmp}/rdmcp-demo.XXXXXX")
say "scratch directory $DIR"
# daemons accept only senders holding the cluster's key: make one
"$RDMCP" -q --genkey "$DIR/key" || die "cannot create a key"
export RDMCP_KEY=$DIR/key
say "shared key: rdmcp --genkey $DIR/key (RDMCP_KEY points both sides at it)"

# 1. the daemons: one per address, each landing files below its own prefix
for n in "${HOSTS[@]}"; do
	if listening "127.0.0.$n"; then
		die "127.0.0.$n:$PORT is already in use (set RDMCP_DEMO_PORT)"
	fi
done
say "starting ${#HOSTS[@]} daemons: rdmcp --serve --listen 127.0.0.N:$PORT --prefix $DIR/hN (N = ${HOSTS[0]}..${HOSTS[-1]})"
for n in "${HOSTS[@]}"; do
	mkdir -p "$DIR/h$n"
	"$RDMCP" --serve --listen "127.0.0.$n:$PORT" --prefix "$DIR/h$n" \
		2>"$DIR/h$n.log" &
	PIDS+=($!)
done
for i in "${!HOSTS[@]}"; do
	n=${HOSTS[$i]}
	for t in $(seq 1 100); do	# 5 s at most
		kill -0 "${PIDS[$i]}" 2>/dev/null ||
			{ show_log "$n"; die "the daemon on 127.0.0.$n exited"; }
		listening "127.0.0.$n" && continue 2
		sleep 0.05
	done
	show_log "$n"
	die "the daemon on 127.0.0.$n:$PORT did not start listening within 5 s"
done
say "all ${#HOSTS[@]} daemons listening"

# 2. the file, and its directory on every host (the parent must exist)
mkdir -p "$DIR/src"
SRC=$DIR/src/data.bin
head -c $((SIZE_MIB << 20)) /dev/urandom >"$SRC"
for n in "${HOSTS[@]}"; do
	mkdir -p "$DIR/h$n$DIR/src"
done
say "made a $SIZE_MIB MiB file of random data: $SRC"

# 3. the push: every host gets the file at the same absolute path
list=
for n in "${HOSTS[@]}"; do
	list="$list${list:+,}127.0.0.$n:$PORT"
done
say "pushing it to ${#HOSTS[@]} hosts at once (binomial pipeline, crc32 verified before landing):"
say "  rdmcp --verify $SRC $list"
echo
# in the background so that a signal reaches our trap at once
timeout -k 5 120 "$RDMCP" --verify "$SRC" "$list" &
SENDER=$!
rc=0
wait "$SENDER" || rc=$?
SENDER=
echo
if [ "$rc" -ne 0 ]; then
	for n in "${HOSTS[@]}"; do
		show_log "$n"
	done
	die "rdmcp exited with status $rc"
fi

# 4. check every copy ourselves
bad=0
for n in "${HOSTS[@]}"; do
	copy=$DIR/h$n$SRC
	if ! cmp -s "$SRC" "$copy"; then
		echo "demo: host 127.0.0.$n: $copy differs from the source or is missing" >&2
		bad=$((bad + 1))
	fi
done
[ "$bad" -eq 0 ] || die "$bad of ${#HOSTS[@]} copies differ from the source"
say "OK: cmp confirms all ${#HOSTS[@]} copies are byte-identical to the $SIZE_MIB MiB source"
