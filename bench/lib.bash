# SPDX-License-Identifier: MIT
# lib.bash - what the netns benchmarks share (cluster.sh,
# tree.sh).  Source it after setting DATA (a scratch directory) and
# RDMCP_NS; it checks for root, removes the cluster and DATA on exit, and
# makes the key the daemons and the sender use.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RDMCP=${RDMCP:-$TOP/rdmcp}	# another build: RDMCP=path
CLUSTER=$TOP/scripts/netns-cluster.sh
PORT=${BENCH_PORT:-7471}
ME=$(basename "$0")

[ "$(id -u)" -eq 0 ] || { echo "$ME: needs root (network namespaces)" >&2; exit 77; }
[ -x "$RDMCP" ] || { echo "$ME: run 'make' first" >&2; exit 2; }

bench_cleanup() {
	"$CLUSTER" down || true
	rm -rf "$DATA"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$DATA"
"$RDMCP" -q --genkey "$DATA/key"
export RDMCP_KEY=$DATA/key

# median: of the numbers on standard input, one per line
median() {
	sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bits_per_s RATE: tc's rate (kbit, mbit, gbit) in bits per second
bits_per_s() {
	local v=${1%%[a-z]*} u=${1##*[0-9]}
	case $u in
	kbit) echo $((v * 1000)) ;;
	mbit) echo $((v * 1000000)) ;;
	gbit) echo $((v * 1000000000)) ;;
	*) echo "$ME: rate unit '$u' (kbit, mbit, gbit)" >&2; exit 2 ;;
	esac
}

# hostlist N: the addresses of hosts 2..N
hostlist() {
	local i list=""
	for i in $(seq 2 "$1"); do
		list="$list${list:+,}$("$CLUSTER" addr "$i")"
	done
	echo "$list"
}

# start_daemons N: a daemon on hosts 2..N, each below $DATA/hI
start_daemons() {
	local i
	for i in $(seq 2 "$1"); do
		mkdir -p "$DATA/h$i"
		"$CLUSTER" exec "$i" "$RDMCP" --serve -q \
			--listen "$("$CLUSTER" addr "$i"):$PORT" \
			--prefix "$DATA/h$i" &
		disown	# 'cluster down' kills them: no job notices
	done
	sleep 1
}

# seconds_of OUTPUT: the time to the last replica in rdmcp's summary
seconds_of() {
	echo "$1" | tail -1 | sed -n 's/.* in \([0-9.]*\) s,.*/\1/p'
}
