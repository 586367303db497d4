#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# slurm-cluster.sh - a real Slurm cluster on one machine, from Debian's
# packages (slurmctld, slurmd, slurm-client, munge), on the emulated
# cluster of scripts/netns-cluster.sh.
#
#   slurm-cluster.sh up N [RATE]    nodes node01..nodeNN (hosts 1..N,
#                                   198.18.0.1..), each NIC shaped to RATE,
#                                   and the controller 'head' (host N+1);
#                                   returns when every node is idle
#   slurm-cluster.sh down           stop everything, remove the namespaces
#                                   and the scratch directory (idempotent)
#   slurm-cluster.sh run CMD...     run CMD on head, the login node (sbatch,
#                                   scontrol, sinfo...)
#   slurm-cluster.sh on NODE CMD... run CMD on NODE (node07, or 7) as its
#                                   slurmd's processes see it: its address,
#                                   hostname, /etc/hosts and disk
#   slurm-cluster.sh nodes          the nodes as one host list, node[01-NN]
#   slurm-cluster.sh dir            the scratch directory
#
# Everything lives in the scratch directory DIR ($SLURM_CLUSTER_DIR,
# default /tmp/rdmcp-slurm.NAME): the configuration (DIR/etc/slurm.conf,
# SLURM_CONF for every command run through this script), munge's key and
# socket, the daemons' state, spools and logs (DIR/log), and the nodes'
# disks.  Every process runs in one of the cluster's network namespaces
# (NAME-hI, NAME is $RDMCP_NS, default rdslurm), so 'down' finds them
# all; nothing is written outside DIR, and the machine's /etc/hosts,
# munge and Slurm configuration are never touched.
#
# What each node sees (the 'node context': its slurmd, the jobs' steps,
# and whatever 'on' runs):
#   - its own network namespace and address (NodeAddr in slurm.conf);
#   - its own hostname, in a UTS namespace: 'hostname -s' says node07, as
#     a job script expects, and slurmctld finds itself by the name 'head';
#   - DIR/etc/hosts bound on /etc/hosts, in the mount namespace that 'ip
#     netns exec' makes for it: node names resolve for every program
#     (rdmcp included), not only for Slurm;
#   - its own disk: DIR/disk/node07 bound on DIR/local.  A path below
#     DIR/local (a job's stage directory) is node-local, as /local or
#     /tmp is on a real node; everything else is shared, as an NFS home.
#
# Settings (environment): SLURM_CLUSTER_DIR; RDMCP_NS; SLURM_CLUSTER_CONF
# (more slurm.conf lines, e.g. 'MessageTimeout=100'; a line may replace
# one of the defaults below, since the last one counts);
# SLURM_CLUSTER_CPUS (CPUs per node, default 4); SLURM_CLUSTER_UP_LIMIT
# (seconds 'up' may take, default 120); SLURM_CLUSTER_LIFETIME (seconds
# after which every Slurm and munge daemon ends by itself, should 'down'
# never come: default 3600).  Needs root.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NETNS=$TOP/scripts/netns-cluster.sh
export RDMCP_NS=${RDMCP_NS:-rdslurm}
NAME=$RDMCP_NS
DIR=${SLURM_CLUSTER_DIR:-/tmp/rdmcp-slurm.$NAME}
CPUS=${SLURM_CLUSTER_CPUS:-4}
UP_LIMIT=${SLURM_CLUSTER_UP_LIMIT:-120}
LIFETIME=${SLURM_CLUSTER_LIFETIME:-3600}
ME=slurm-cluster.sh

say() { echo "$ME: $*" >&2; }
die() { say "$*"; exit 1; }

# nodes_up: N of the cluster that is up (0: none)
nodes_up() {
	cat "$DIR/nodes" 2>/dev/null || echo 0
}

# node_name K [N]: nodeKK, with as many digits as N needs (at least 2)
node_name() {
	local n=${2:-$(nodes_up)} w=2
	[ "${#n}" -le 2 ] || w=${#n}
	printf 'node%0*d' "$w" "$1"
}

# node_index NODE: K of nodeK or K
node_index() {
	local k=${1#node}
	if ! [[ $k =~ ^[0-9]+$ ]] || [ "$((10#$k))" -lt 1 ] || [ "$((10#$k))" -gt "$(nodes_up)" ]; then
		die "no node '$1' (the cluster has $(nodes_up))"
	fi
	echo "$((10#$k))"
}

# in_host I HOSTNAME DISK CMD...: exec CMD in host I's namespace as
# HOSTNAME, with the cluster's /etc/hosts and, if DISK is not empty,
# DISK on DIR/local.  'ip netns exec' makes a mount namespace of its own
# (its / a slave of the machine's), so the bind mounts are seen by CMD and
# its children only and vanish with them; 'unshare --uts' gives them a
# hostname of their own.  Every step execs, so that CMD keeps the pid.
in_host() {
	local i=$1 host=$2 disk=$3
	shift 3
	export SLURM_CONF=$DIR/etc/slurm.conf
	# shellcheck disable=SC2016 # the inner shell's $1..$4
	exec ip netns exec "$NAME-h$i" unshare --uts -- sh -c '
		mount --bind "$1" /etc/hosts || exit 125
		hostname "$2" || exit 125
		if [ -n "$3" ]; then mount --bind "$3" "$4" || exit 125; fi
		shift 4
		exec "$@"' sh "$DIR/etc/hosts" "$host" "$disk" "$DIR/local" "$@"
}

# daemon LOG I HOSTNAME DISK CMD...: start CMD in the background in that
# context, ended after LIFETIME seconds at the latest, its output in LOG
daemon() {
	local log=$1
	shift
	(in_host "$1" "$2" "$3" timeout -k 5 "$LIFETIME" "${@:4}") \
		</dev/null >>"$log" 2>&1 &
	disown
}

# until_ok SECS WHAT CMD...: run CMD every 0.2 s until it succeeds; fail
# after SECS saying WHAT did not happen
until_ok() {
	local secs=$1 what=$2
	shift 2
	for _ in $(seq 1 $((secs * 5))); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	die "$what within $secs s"
}

write_config() {
	local n=$1 head=$2 k
	{
		echo "127.0.0.1 localhost"
		echo "::1 localhost"
		echo "$("$NETNS" addr "$head") head"
		for k in $(seq 1 "$n"); do
			echo "$("$NETNS" addr "$k") $(node_name "$k" "$n")"
		done
	} >"$DIR/etc/hosts"

	cat >"$DIR/etc/slurm.conf" <<EOF
# Written by scripts/slurm-cluster.sh: $n nodes and a controller, each in a
# network namespace of its own, all on one kernel.
ClusterName=rdmcp
# slurmctld runs only where the hostname is 'head': it gets a UTS
# namespace of that name.
SlurmctldHost=head($("$NETNS" addr "$head"))
# Our own munged (its socket in the scratch directory), never the
# machine's; credentials (cred/munge) use the same socket.
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge/socket
# Every daemon as root: no slurm user's directories to prepare, and the
# test jobs run as root to drain nodes.
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$DIR/state
SlurmctldPidFile=$DIR/state/slurmctld.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
# Several slurmd on one file system: each its own spool (job scripts, the
# sockets to its slurmstepds), pid file and log; %n is the node's name.
SlurmdSpoolDir=$DIR/spool/%n
SlurmdPidFile=$DIR/spool/%n.pid
SlurmdLogFile=$DIR/log/slurmd-%n.log
# Several slurmd on one kernel: proctrack/linuxproc finds a job's
# processes by their parent pids, which works for any number of them;
# proctrack/cgroup would give every slurmd the same cgroup hierarchy.
# task/none: task/affinity would pin every node's tasks to the same
# cores, task/cgroup needs cgroups.  No accounting (no slurmdbd).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
# Jobs share nodes by CPU (two jobs on overlapping nodes run at once).
# Every slurmd sees the machine's cores; config_overrides makes the
# configured CPUs count instead, so the nodes are not drained for having
# fewer than configured, and are alike on any machine.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
# A node registering late (its slurmd started after slurmctld) is
# available at once.
ReturnToService=2
# The default, /usr/bin/mail, is not installed.
MailProg=/bin/true
SlurmctldDebug=info
SlurmdDebug=info
NodeName=DEFAULT CPUs=$CPUS RealMemory=1000 State=UNKNOWN
EOF
	{
		for k in $(seq 1 "$n"); do
			echo "NodeName=$(node_name "$k" "$n") NodeAddr=$("$NETNS" addr "$k")"
		done
		echo "# A job without --time ends after 30 minutes."
		echo "PartitionName=all Nodes=ALL Default=YES DefaultTime=30 MaxTime=INFINITE State=UP"
		if [ -n "${SLURM_CLUSTER_CONF:-}" ]; then
			echo "# SLURM_CLUSTER_CONF"
			echo "$SLURM_CLUSTER_CONF"
		fi
	} >>"$DIR/etc/slurm.conf"

	# slurmd 22.05 initialises a cgroup plugin even when none of its
	# plugins uses cgroups, and fails ("No filesystem mounted on
	# /sys/fs/cgroup ... slurmd initialization failed") in a namespace of
	# 'ip netns exec', which mounts a fresh /sys without the machine's
	# cgroup file systems.  An empty directory as the mount point satisfies
	# it, and keeps every slurmd away from the machine's real cgroups.
	cat >"$DIR/etc/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=$DIR/cgroup
EOF
}

# ready_nodes: how many nodes sinfo reports idle, mixed or allocated
ready_nodes() {
	"$0" run sinfo -h -N -o '%T' 2>/dev/null | grep -cE '^(idle|mixed|allocated)$' || true
}

# wait_nodes N SECS: until N nodes are ready; else say which are not, in
# what state, and fail
wait_nodes() {
	local n=$1 secs=$2 end=$((SECONDS + $2))
	while [ "$SECONDS" -lt "$end" ]; do	# sinfo may be slow: by the clock
		[ "$(ready_nodes)" -eq "$n" ] && return 0
		sleep 0.2
	done
	say "the nodes not ready, their state and reason:"
	"$0" run sinfo -h -N -o '%N %T %E' 2>&1 | grep -vE '^[^ ]+ (idle|mixed|allocated) ' >&2 || true
	die "$(ready_nodes) of $n nodes came up idle within $secs s"
}

# up_failed: on the way out of a failed 'up', say why and leave nothing
up_failed() {
	local rc=$? f
	[ "$rc" -ne 0 ] || return 0
	say "up failed; the logs' last lines:"
	for f in "$DIR"/log/*; do
		[ -s "$f" ] && { echo "--- $f"; tail -n 5 "$f"; }
	done >&2
	down
	exit "$rc"
}

up() {
	local n=${1:-} rate=${2:-} head k node deadline
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 999 ]; then
		say "usage: $ME up N [RATE] (N 1..999)"
		exit 2
	fi
	[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
	for k in munged slurmctld slurmd sinfo; do
		command -v "$k" >/dev/null ||
			die "no $k: install slurmctld slurmd slurm-client munge (scripts/install-deps.sh)"
	done
	down
	trap up_failed EXIT
	trap 'exit 130' INT TERM
	deadline=$((SECONDS + UP_LIMIT))
	head=$((n + 1))
	mkdir -p "$DIR"/{etc,munge,state,spool,log,cgroup,local,disk}
	echo "$n" >"$DIR/nodes"
	write_config "$n" "$head"
	for k in $(seq 1 "$n"); do
		mkdir -p "$DIR/spool/$(node_name "$k")" "$DIR/disk/$(node_name "$k")"
	done
	"$NETNS" up "$head" ${rate:+"$rate"}

	# munged: the key readable by root alone, as munged requires; the
	# socket's directory open to all, so that any user's job could use it
	mkdir -p "$DIR/munge/key"
	chmod 700 "$DIR/munge/key"
	head -c 1024 /dev/urandom >"$DIR/munge/key/munge.key"
	chmod 400 "$DIR/munge/key/munge.key"
	chmod 755 "$DIR/munge"
	# --force: munged refuses a socket below a world-writable directory
	# (/tmp) otherwise, sticky bit or not
	daemon "$DIR/log/munged.out" "$head" head "" munged -F --force \
		--socket="$DIR/munge/socket" --key-file="$DIR/munge/key/munge.key" \
		--log-file="$DIR/log/munged.log" --pid-file="$DIR/munge/munged.pid" \
		--seed-file="$DIR/munge/seed"
	until_ok $((deadline - SECONDS)) "munged did not answer" \
		sh -c "munge -S '$DIR/munge/socket' -n | unmunge -S '$DIR/munge/socket'"

	daemon "$DIR/log/slurmctld.out" "$head" head "" slurmctld -D
	until_ok $((deadline - SECONDS)) "slurmctld did not answer" \
		"$0" run scontrol ping

	for k in $(seq 1 "$n"); do
		node=$(node_name "$k")
		daemon "$DIR/log/slurmd-$node.out" "$k" "$node" "$DIR/disk/$node" \
			slurmd -D -N "$node"
	done
	wait_nodes "$n" $((deadline - SECONDS))
	trap - EXIT INT TERM
	say "up: $n nodes $(nodes) ${rate:+at $rate }and head; SLURM_CONF=$DIR/etc/slurm.conf"
}

down() {
	# the namespaces' processes are killed with them (netns-cluster.sh)
	"$NETNS" down
	# then wait, briefly, for the last of them to go, so that no mount
	# namespace holds the directory we remove
	for _ in $(seq 1 50); do
		pgrep -f "$DIR/" >/dev/null 2>&1 || break
		sleep 0.1
	done
	rm -rf "$DIR"
}

# nodes: the nodes as one host list
nodes() {
	local n
	n=$(nodes_up)
	[ "$n" -gt 0 ] || die "no cluster is up in $DIR"
	if [ "$n" -eq 1 ]; then node_name 1; else echo "node[$(node_name 1 | sed 's/^node//')-$(node_name "$n" | sed 's/^node//')]"; fi
}

case "${1:-}" in
up) shift; up "$@" ;;
down) down ;;
run)
	shift
	[ "$(nodes_up)" -gt 0 ] || die "no cluster is up in $DIR"
	in_host "$(($(nodes_up) + 1))" head "" "$@"
	;;
on)
	shift
	[ $# -ge 2 ] || { say "usage: $ME on NODE CMD..."; exit 2; }
	k=$(node_index "$1")
	shift
	in_host "$k" "$(node_name "$k")" "$DIR/disk/$(node_name "$k")" "$@"
	;;
nodes) nodes ;;
dir) echo "$DIR" ;;
*) sed -n '2,21p' "$0"; exit 2 ;;
esac
