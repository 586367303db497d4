#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# netns-cluster.sh - an emulated cluster of Linux hosts on one machine.
#
#   netns-cluster.sh up N [RATE]    hosts 1..N, each NIC shaped to RATE
#                                   (tc rate, e.g. 200mbit; default: none)
#   netns-cluster.sh down           remove every namespace it made
#   netns-cluster.sh shape I RATE   host I's NIC at RATE instead, both ways
#   netns-cluster.sh racks R UPLINK split the hosts into R racks of equal
#                                   size (host 1.. in rack 1): each rack a
#                                   bridge of its own, joined to the core
#                                   (br0) by an uplink shaped to UPLINK
#                                   each way
#   netns-cluster.sh uplink-bytes   bytes each uplink carried, per rack:
#                                   "RACK OUT IN" (out: leaving the rack)
#   netns-cluster.sh exec I CMD...  run CMD on host I
#   netns-cluster.sh addr I         print host I's address
#
# Each host is a network namespace NAME-hI with one NIC, eth0, a veth whose
# peer sits on bridge br0 in the switch namespace NAME-sw.  Addresses are
# in 198.18.0.0/15 only (198.18.0.1 is host 1).  With RATE, a tbf qdisc
# shapes each host's upload on eth0 and its download on the switch port,
# so every NIC sends and receives at RATE at once, like a full-duplex link.
# Needs root.  NAME is $RDMCP_NS (default rdmcp); $RDMCP_NS_CC, if set,
# is every host's TCP congestion control (default: the machine's).
set -euo pipefail

NAME=${RDMCP_NS:-rdmcp}
SW=$NAME-sw
BURST=${RDMCP_NS_BURST:-256kb}
GSO=${RDMCP_NS_GSO:-}
CC=${RDMCP_NS_CC:-}

host_ns() { echo "$NAME-h$1"; }

addr() {
	local i=$1
	echo "198.18.$((i / 250)).$((i % 250 + (i >= 250 ? 1 : 0)))"
}

shape() {
	# shape NS DEV RATE: tbf, with a bucket of 256 KiB.  A bucket of
	# exactly 64 KiB is smaller than a 64 KiB GSO packet with its headers,
	# so tbf would cut every such packet into MTU-sized ones and the
	# emulation would spend the CPU in softirq instead of moving data.
	ip netns exec "$1" tc qdisc replace dev "$2" root tbf rate "$3" \
		burst "$BURST" latency 25ms
	[ -z "$GSO" ] || ip -n "$1" link set dev "$2" gso_max_size "$GSO"
}

up() {
	local n=$1 rate=${2:-} i ns
	[ "$n" -ge 1 ] && [ "$n" -le 1000 ] || { echo "N must be 1..1000" >&2; exit 2; }
	down
	ip netns add "$SW"
	ip -n "$SW" link set lo up
	ip -n "$SW" link add br0 type bridge
	ip -n "$SW" link set br0 up
	for i in $(seq 1 "$n"); do
		ns=$(host_ns "$i")
		ip netns add "$ns"
		ip -n "$ns" link set lo up
		[ -z "$CC" ] || ip netns exec "$ns" sysctl -qw \
			net.ipv4.tcp_congestion_control="$CC"
		ip link add "rdh$$x$i" type veth peer name "p$i" netns "$SW"
		ip link set "rdh$$x$i" netns "$ns"
		ip -n "$ns" link set "rdh$$x$i" name eth0
		ip -n "$ns" addr add "$(addr "$i")/15" dev eth0
		ip -n "$ns" link set eth0 up
		ip -n "$SW" link set "p$i" master br0 up
		if [ -n "$rate" ]; then
			shape "$ns" eth0 "$rate"
			shape "$SW" "p$i" "$rate"
		fi
	done
}

# racks R UPLINK: rack r holds hosts (r-1)*N/R+1 .. r*N/R of the N up
racks() {
	local r=$1 rate=$2 n i k
	n=$(ip -n "$SW" -o link show master br0 | grep -c ': p[0-9]*@' || true)
	[ "$r" -ge 1 ] && [ $((n % r)) -eq 0 ] ||
		{ echo "$n hosts do not split into $r racks" >&2; exit 2; }
	for k in $(seq 1 "$r"); do
		ip -n "$SW" link add "rk$k" type bridge
		ip -n "$SW" link set "rk$k" up
		ip -n "$SW" link add "up$k" type veth peer name "co$k"
		ip -n "$SW" link set "up$k" master "rk$k" up
		ip -n "$SW" link set "co$k" master br0 up
		shape "$SW" "up$k" "$rate"
		shape "$SW" "co$k" "$rate"
		for i in $(seq $(((k - 1) * n / r + 1)) $((k * n / r))); do
			ip -n "$SW" link set "p$i" master "rk$k"
		done
	done
}

# uplink_bytes: per rack, the bytes its uplink carried out and in
uplink_bytes() {
	local k out in
	for k in $(ip -n "$SW" -o link show | sed -n 's/^[0-9]*: up\([0-9]*\)@.*/\1/p' | sort -n); do
		out=$(ip netns exec "$SW" cat "/sys/class/net/up$k/statistics/tx_bytes")
		in=$(ip netns exec "$SW" cat "/sys/class/net/co$k/statistics/tx_bytes")
		echo "$k $out $in"
	done
}

down() {
	local ns
	for ns in $(ip netns list | awk '{print $1}' | grep -E "^$NAME-(sw|h[0-9]+)$" || true); do
		ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	done
}

case "${1:-}" in
up) shift; up "$@" ;;
down) down ;;
shape) shape "$(host_ns "$2")" eth0 "$3"; shape "$SW" "p$2" "$3" ;;
exec) shift; i=$1; shift; exec ip netns exec "$(host_ns "$i")" "$@" ;;
addr) addr "$2" ;;
racks) racks "$2" "$3" ;;
uplink-bytes) uplink_bytes ;;
*) sed -n '2,24p' "$0"; exit 2 ;;
esac
