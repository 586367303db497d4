#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# demo.sh - rdmcp in one minute, no root needed (what 'make demo' runs).
#
# Starts a receiving daemon on each of 8 loopback addresses (each with its
# own --prefix, so they act as 8 machines), then pushes one file of random
# data, checked with --verify, three ways and shows them side by side:
#
#   to 1 host                     the time of one copy
#   to 8 hosts, binomial pipeline rdmcp: the hosts relay blocks (the
#     (chosen)                    schedule rdmcp picks, from a dry run)
#   to 8 hosts, -a sequential     what a loop of copies does
#
# with each one's time, its ratio to the 1-host time, and what the sender
# uploaded (bytes it wrote, from /proc/PID/io, over the file's size).
# Then cmp checks every copy.  Everything lives in a scratch directory
# that is removed at the end; the daemons are stopped however it ends.
#
# Settings (environment):
#   RDMCP_DEMO_ADDRS  the daemons' addresses, at least 2, the first alone
#                     for the 1-host push (default: 127.0.0.2 ... 127.0.0.9)
#   RDMCP_DEMO_PORT   their port (default 7471)
#   RDMCP_DEMO_MIB    the file's size in MiB (default 64)
#   RDMCP             the program (default: ./rdmcp, built if missing,
#                     after scripts/deps.sh has installed what building
#                     needs, make included: 'sudo scripts/demo.sh' works
#                     where make is missing)
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RDMCP=${RDMCP:-$TOP/rdmcp}
PORT=${RDMCP_DEMO_PORT:-7471}
SIZE_MIB=${RDMCP_DEMO_MIB:-64}
read -ra ADDRS <<<"${RDMCP_DEMO_ADDRS:-127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 127.0.0.6 127.0.0.7 127.0.0.8 127.0.0.9}"
N=${#ADDRS[@]}
DIR=
PIDS=()		# daemons
SENDER=		# a push, while it runs

say() { echo "demo: $*"; }
die() { echo "demo: FAILED: $*" >&2; exit 1; }

cleanup() {
	local rc=$? pid alive
	trap - EXIT INT TERM
	if [ -n "$SENDER" ]; then
		kill -TERM "$SENDER" 2>/dev/null || true
		wait "$SENDER" 2>/dev/null || true
	fi
	if [ ${#PIDS[@]} -gt 0 ]; then
		kill -TERM "${PIDS[@]}" 2>/dev/null || true
		# give them 5 s to remove temporaries and exit, then insist
		for _ in $(seq 1 50); do
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

# show_log I: the last lines daemon I logged, after a failure
show_log() {
	[ -f "$DIR/h$1.log" ] && sed 's/^/    /' "$DIR/h$1.log" | tail -5 >&2
	return 0
}

case $PORT in
'' | *[!0-9]*) die "RDMCP_DEMO_PORT must be a port number, not '$PORT'" ;;
esac
case $SIZE_MIB in
'' | *[!0-9]* | 0) die "RDMCP_DEMO_MIB must be a number of MiB, not '$SIZE_MIB'" ;;
esac
[ "$N" -ge 2 ] || die "RDMCP_DEMO_ADDRS needs at least 2 addresses"
if [ ! -x "$RDMCP" ]; then
	# what building needs (make itself included), installed if missing
	"$TOP/scripts/deps.sh" build || die "cannot build rdmcp without them"
	say "building rdmcp first: make -C $TOP"
	make -C "$TOP" --no-print-directory DEPS=no >/dev/null ||
		die "make failed"
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/rdmcp-demo.XXXXXX")
say "scratch directory $DIR"
# daemons accept only senders holding the cluster's key: make one
"$RDMCP" -q --genkey "$DIR/key" || die "cannot create a key"
export RDMCP_KEY=$DIR/key
say "shared key: rdmcp --genkey $DIR/key (RDMCP_KEY points both sides at it)"

# 1. the daemons: one per address, each landing files below its own prefix
for a in "${ADDRS[@]}"; do
	listening "$a" && die "$a:$PORT is already in use (set RDMCP_DEMO_PORT or RDMCP_DEMO_ADDRS)"
done
say "starting $N daemons: rdmcp --serve --listen ADDR:$PORT --prefix $DIR/hI (ADDR: ${ADDRS[*]})"
for i in "${!ADDRS[@]}"; do
	mkdir -p "$DIR/h$i$DIR/to"
	"$RDMCP" --serve --listen "${ADDRS[$i]}:$PORT" --prefix "$DIR/h$i" \
		2>"$DIR/h$i.log" &
	PIDS+=($!)
done
for i in "${!ADDRS[@]}"; do
	for _ in $(seq 1 100); do	# 5 s at most
		kill -0 "${PIDS[$i]}" 2>/dev/null ||
			{ show_log "$i"; die "the daemon on ${ADDRS[$i]} exited"; }
		listening "${ADDRS[$i]}" && continue 2
		sleep 0.05
	done
	show_log "$i"
	die "the daemon on ${ADDRS[$i]}:$PORT did not start listening within 5 s"
done
say "all $N daemons listening"

# 2. the file
mkdir -p "$DIR/src"
SRC=$DIR/src/data.bin
head -c $((SIZE_MIB << 20)) /dev/urandom >"$SRC"
say "made a $SIZE_MIB MiB file of random data: $SRC"

# push NAME HOSTS OPTIONS...: push SRC to HOSTS, into $DIR/to/NAME/ on
# each (made there), in the background so that a signal reaches our trap
# at once; sets MS (wall time, ms) and UP (bytes the sender wrote: its
# /proc/PID/io wchar, which counts what it sent, once it is reaped)
push() {
	local name=$1 hosts=$2 rc=0 t0
	shift 2
	t0=$(date +%s%N)
	# shellcheck disable=SC2016 # expanded by that sh
	timeout -k 5 120 sh -c '"$@"; rc=$?; grep "^wchar:" /proc/$$/io >"$0"; exit $rc' \
		"$DIR/io.$name" "$RDMCP" --verify -d "$DIR/to/$name/" "$@" \
		"$SRC" "$hosts" &
	SENDER=$!
	wait "$SENDER" || rc=$?
	SENDER=
	MS=$(( ($(date +%s%N) - t0) / 1000000 ))
	if [ "$rc" -ne 0 ]; then
		for i in "${!ADDRS[@]}"; do show_log "$i"; done
		die "rdmcp exited with status $rc"
	fi
	UP=$(awk '{ print $2 }' "$DIR/io.$name")
}

all=$(printf "%s:$PORT," "${ADDRS[@]}")
all=${all%,}
say "pushing it to 1 host: rdmcp --verify -d $DIR/to/one/ $SRC ${ADDRS[0]}:$PORT"
push one "${ADDRS[0]}:$PORT" -q
ONE_MS=$MS ONE_UP=$UP
# the schedule rdmcp chooses for this file and these hosts (a dry run's
# plan: on one machine it is not the one --plan shows for a network)
ALG=$("$RDMCP" --dry-run -d "$DIR/to/" "$SRC" "$all" 2>/dev/null |
	sed -n 's/^plan: .*, \([a-z]*\) schedule of .*/\1/p')
case $ALG in
binomial) ALG="binomial pipeline (chosen)" ;;
chain) ALG="chain (chosen)" ;;
*) die "rdmcp --dry-run did not say which schedule it would choose" ;;
esac
say "pushing it to $N hosts at once, $ALG, crc32 verified before landing:"
say "  rdmcp --verify -d $DIR/to/all/ $SRC $all"
echo
push all "$all"
ALL_MS=$MS ALL_UP=$UP
echo
say "and to the $N hosts one after another (-a sequential), as a loop of copies would"
push seq "$all" -q -a sequential
SEQ_MS=$MS SEQ_UP=$UP

# 3. side by side
bytes=$((SIZE_MIB << 20))
echo
awk -v n="$N" -v b="$bytes" -v one="$ONE_MS" -v oneu="$ONE_UP" \
	-v all="$ALL_MS" -v allu="$ALL_UP" -v seq="$SEQ_MS" -v sequ="$SEQ_UP" \
	-v alg="$ALG" '
function row(what, ms, up) {
	printf "demo:   %-35s %8.3f s   %5.2f   %5.2f x the file\n",
		what, ms / 1000, ms / one, up / b
}
BEGIN {
	printf "demo:   %-35s %10s   %5s   %s\n", "push", "time", "ratio", "the sender uploaded"
	row("1 host", one, oneu)
	row(n " hosts, " alg, all, allu)
	row(n " hosts, one after another", seq, sequ)
}'
echo
say "the sender uploads about one copy however many hosts there are: the"
say "hosts relay blocks to one another.  On loopback the network is this"
say "machine's memory and all $((N + 1)) processes share its $(nproc) cores, so the"
say "times show how the work spreads over cores; across machines every host"
say "brings its own network link and CPU (make bench emulates a cluster)."

# 4. check every copy ourselves
bad=0
for i in "${!ADDRS[@]}"; do
	for name in all seq $([ "$i" -eq 0 ] && echo one); do
		copy=$DIR/h$i$DIR/to/$name/data.bin
		if ! cmp -s "$SRC" "$copy"; then
			echo "demo: host ${ADDRS[$i]}: $copy differs from the source or is missing" >&2
			bad=$((bad + 1))
		fi
	done
done
[ "$bad" -eq 0 ] || die "$bad copies differ from the source"
say "OK: cmp confirms all $((2 * N + 1)) copies are byte-identical to the $SIZE_MIB MiB source"
