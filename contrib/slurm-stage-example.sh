#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# slurm-stage-example.sh - stage files (a binary, a data set) in to the
# local disk of every node of a Slurm allocation with rdmcp, from the
# batch host, before the job's steps start.  It is a stage-in helper that
# the batch script calls, as the job's user, once: not a Prolog= script,
# which slurmd runs as root on every node (where a push from one host to
# all the others does not fit).  Call it at the top of a batch script:
#
#   #!/bin/bash
#   #SBATCH --nodes=64
#   stage=/local/$SLURM_JOB_ID
#   STAGE_DIR=$stage slurm-stage-example.sh ./solver ./input.dat
#   case $? in
#   0) srun "$stage/solver" "$stage/input.dat" ;;
#   1) srun --exclude="$(cat "rdmcp-failed.$SLURM_JOB_ID")" \
#          "$stage/solver" "$stage/input.dat" ;;
#   *) exit 1 ;;
#   esac
#
# Every node must run the daemon (rdmcp --serve, see rdmcp.service) with
# a root that holds STAGE_DIR, and the sender needs the cluster's key
# (RDMCP_KEY or /etc/rdmcp/key).  The hosts are $SLURM_JOB_NODELIST but
# the batch host itself (rdmcp refuses to send to its own host): when it
# is part of the allocation it gets its copy with cp.  The sources must
# not lie in STAGE_DIR.
#
# Usage: slurm-stage-example.sh FILE...
#
# Settings (environment):
#   STAGE_DIR      where the files land on every node (absolute; default
#                  /local/$SLURM_JOB_ID)
#   STAGE_MKDIR    1 (default): create STAGE_DIR on every node first with
#                  'srun --ntasks-per-node=1 mkdir -p', as the job's user,
#                  who then owns it; 0: rdmcp makes it where it is
#                  missing, with its parents (-d DIR/), owned as its
#                  daemon gives what it makes (the owner of its root)
#   FAILED_FILE    where the nodes that did not get a copy are written, as
#                  one host list for 'srun --exclude' or 'sbatch --exclude'
#                  (default ./rdmcp-failed.$SLURM_JOB_ID); removed when
#                  every node got its copy
#   STAGE_DRAIN    1: drain the failed nodes with 'scontrol update' (needs
#                  the rights to, e.g. in PrologSlurmctld); default 0
#   RDMCP          the rdmcp program (default: rdmcp from PATH)
#   RDMCP_OPTS     more rdmcp options, split at blanks (e.g. '-b 4M
#                  --retries 2' or '-P 7471'); --verify is always given
#
# Exit status:
#   0  every node holds every file
#   1  some nodes failed: they are listed on stderr and in FAILED_FILE
#      (and drained with STAGE_DRAIN=1); the others hold every file, so
#      the job may go on without the failed nodes
#   2  usage error (no files, no node list, a bad setting or rdmcp option)
#   3  nothing could be staged, through no fault of the nodes: an
#      unreadable source, no usable key, STAGE_DIR not created, FAILED_FILE
#      not writable; nothing is drained
set -uo pipefail

me=${0##*/}
RDMCP=${RDMCP:-rdmcp}
STAGE_DIR=${STAGE_DIR:-/local/${SLURM_JOB_ID:-}}
STAGE_MKDIR=${STAGE_MKDIR:-1}
STAGE_DRAIN=${STAGE_DRAIN:-0}
FAILED_FILE=${FAILED_FILE:-rdmcp-failed.${SLURM_JOB_ID:-nojob}}
read -r -a rdmcp_opts <<<"${RDMCP_OPTS:-}"

say() { echo "$me: $*" >&2; }
usage() { say "$*"; say "usage: [STAGE_DIR=DIR] $me FILE..."; exit 2; }

[ $# -gt 0 ] || usage "no files to stage"
[ -n "${SLURM_JOB_NODELIST:-}" ] ||
	usage "SLURM_JOB_NODELIST is not set: run me inside an allocation"
case $STAGE_DIR in
/ | */) usage "STAGE_DIR must be an absolute directory below /, without a trailing /: '$STAGE_DIR'" ;;
/?*) ;;
*) usage "STAGE_DIR must be absolute: '$STAGE_DIR'" ;;
esac
case $STAGE_MKDIR$STAGE_DRAIN in
[01][01]) ;;
*) usage "STAGE_MKDIR and STAGE_DRAIN are 0 or 1" ;;
esac
for f in "$@"; do
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then
		say "cannot read '$f'"
		exit 3
	fi
done

# the job's user makes the directory, and owns it (else rdmcp makes it)
if [ "$STAGE_MKDIR" = 1 ]; then
	if ! srun --ntasks-per-node=1 --nodes="${SLURM_JOB_NUM_NODES:-1}" \
		mkdir -p "$STAGE_DIR"; then
		say "could not create $STAGE_DIR on the nodes"
		exit 3
	fi
fi

# the batch host, if it is one of the nodes, copies for itself and is
# left out of the push (rdmcp sends to no host that is this machine)
self=$(hostname -s)
exclude=()
if scontrol show hostnames "$SLURM_JOB_NODELIST" 2>/dev/null | grep -qx "$self"; then
	if ! mkdir -p "$STAGE_DIR" || ! cp -p -- "$@" "$STAGE_DIR/"; then
		say "could not copy the files to $STAGE_DIR on $self"
		exit 3
	fi
	exclude=(-x "$self")
fi

# the node list given explicitly (rdmcp would also take it from the
# environment when the last argument is a file)
rc=0
"$RDMCP" --verify -d "$STAGE_DIR/" "${exclude[@]}" --failed-file "$FAILED_FILE" \
	"${rdmcp_opts[@]}" -- "$@" "$SLURM_JOB_NODELIST" || rc=$?

case $rc in
0)
	rm -f "$FAILED_FILE"
	say "staged $# file(s) to $STAGE_DIR on $SLURM_JOB_NODELIST"
	exit 0
	;;
1)
	failed=$(cat "$FAILED_FILE" 2>/dev/null)
	if [ -z "$failed" ]; then
		say "rdmcp reported failed nodes but $FAILED_FILE is empty"
		exit 3
	fi
	say "nodes without a copy: $failed (listed in $FAILED_FILE)"
	say "run the job without them: srun --exclude=$failed ..."
	if [ "$STAGE_DRAIN" = 1 ]; then
		if scontrol update NodeName="$failed" State=DRAIN \
			Reason="rdmcp staging failed (job ${SLURM_JOB_ID:-?})"; then
			say "drained $failed"
		else
			say "could not drain $failed"
		fi
	fi
	exit 1
	;;
2)
	say "rdmcp rejected its arguments (check RDMCP_OPTS and the node list)"
	exit 2
	;;
3)
	say "rdmcp could not run the transfer (source, key or $FAILED_FILE); no node is to blame"
	exit 3
	;;
*)
	# 126/127: no rdmcp; anything else is unexpected from a sender
	say "rdmcp ($RDMCP) failed with status $rc"
	exit 3
	;;
esac
