#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# spark-hadoop-stage-example.sh - stage files (a job's jar, its
# configuration, a data file) to every worker of a Spark or Hadoop cluster
# with rdmcp, from the host that submits the job (the driver), before it
# is submitted:
#
#   STAGE_DIR=/opt/jobs/etl spark-hadoop-stage-example.sh etl.jar etl.conf
#   spark-submit --jars /opt/jobs/etl/etl.jar ...
#
# The workers are those of the cluster's workers file (one host per line,
# '#' comments), which rdmcp reads with -f.  Each worker must run the
# daemon (rdmcp --serve, see rdmcp.service) with a root that holds
# STAGE_DIR; rdmcp makes STAGE_DIR where it is missing, with its missing
# parents (-d DIR/).  When the driver is a worker too, it copies the files
# for itself (rdmcp sends to no host that is this machine) and is left out
# of the push; it is reported, listed and counted as the others.  The
# sender needs the cluster's key (RDMCP_KEY or /etc/rdmcp/key).
#
# Usage: spark-hadoop-stage-example.sh FILE...
#
# Settings (environment):
#   STAGE_DIR       where the files land on every worker (absolute, no
#                   trailing /; required)
#   WORKERS_FILE    the workers; default the first that exists of
#                   $SPARK_HOME/conf/workers, $HADOOP_CONF_DIR/workers,
#                   $HADOOP_HOME/etc/hadoop/workers
#   STAGED_WORKERS  where to write the workers that hold every file, one
#                   per line, for SPARK_WORKERS= or HADOOP_WORKERS=
#                   (default ./workers.staged)
#   FAILED_FILE     where to write the workers that do not, as one host
#                   list (default ./workers.failed); removed when none
#   STAGE_FORCE     1: replace files already in STAGE_DIR (a new version
#                   of the jar); default 0
#   RDMCP           the rdmcp program (default: rdmcp from PATH)
#   RDMCP_OPTS      more rdmcp options, split at blanks (e.g. '-P 7471
#                   --retries 2'); --verify is always given
#
# Needs jq, to read rdmcp's --json report.
#
# Exit status:
#   0  every worker holds every file
#   1  some workers failed: they are listed with the reasons on stderr and
#      in FAILED_FILE; STAGED_WORKERS lists the others, so the job may run
#      on those (SPARK_WORKERS=$STAGED_WORKERS, HADOOP_WORKERS=...)
#   2  usage error (no files, no workers file, a bad setting or rdmcp
#      option)
#   3  nothing was staged, through no fault of the workers: an unreadable
#      source, no usable key, no jq, an unwritable report file
set -uo pipefail

me=${0##*/}
RDMCP=${RDMCP:-rdmcp}
STAGE_DIR=${STAGE_DIR:-}
STAGED_WORKERS=${STAGED_WORKERS:-workers.staged}
FAILED_FILE=${FAILED_FILE:-workers.failed}
STAGE_FORCE=${STAGE_FORCE:-0}
read -r -a rdmcp_opts <<<"${RDMCP_OPTS:-}"

say() { echo "$me: $*" >&2; }
usage() { say "$*"; say "usage: STAGE_DIR=DIR $me FILE..."; exit 2; }

if [ -z "${WORKERS_FILE:-}" ]; then
	for f in ${SPARK_HOME:+"$SPARK_HOME/conf/workers"} \
		${HADOOP_CONF_DIR:+"$HADOOP_CONF_DIR/workers"} \
		${HADOOP_HOME:+"$HADOOP_HOME/etc/hadoop/workers"}; do
		if [ -f "$f" ]; then
			WORKERS_FILE=$f
			break
		fi
	done
fi

[ $# -gt 0 ] || usage "no files to stage"
[ -n "${WORKERS_FILE:-}" ] ||
	usage "no workers file: set WORKERS_FILE, SPARK_HOME or HADOOP_CONF_DIR"
[ -r "$WORKERS_FILE" ] || usage "cannot read the workers file '$WORKERS_FILE'"
case $STAGE_DIR in
*/) usage "STAGE_DIR must not end in /: '$STAGE_DIR'" ;;
/?*) ;;
*) usage "STAGE_DIR must be an absolute directory: '$STAGE_DIR'" ;;
esac
case $STAGE_FORCE in
0) force=() ;;
1) force=(--force) ;;
*) usage "STAGE_FORCE is 0 or 1" ;;
esac
command -v jq >/dev/null 2>&1 || { say "jq is not installed"; exit 3; }
for f in "$@"; do
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then
		say "cannot read '$f'"
		exit 3
	fi
done

# is_me WORKER: is this entry of the workers file this machine, as rdmcp
# sees it (its host name, short or with a domain, ignoring case, or one of
# its addresses)?
host=$(hostname 2>/dev/null | tr '[:upper:]' '[:lower:]')
host_all=" $host $(hostname -f 2>/dev/null | tr '[:upper:]' '[:lower:]') $(hostname -I 2>/dev/null) "
is_me() {
	local w
	w=$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')
	case $host_all in *" $w "*) return 0 ;; esac
	case $w in *.*) case $host in *.*) return 1 ;; esac ;; esac
	[ -n "$host" ] && [ "${w%%.*}" = "${host%%.*}" ]
}

# the driver's own entry in the workers file, if it has one, and how many
# others there are
driver=""
others=0
while read -r w _; do
	w=${w%%#*}
	if [ -z "$w" ]; then
		continue
	elif is_me "$w"; then
		driver=$w
	else
		others=$((others + 1))
	fi
done <"$WORKERS_FILE"

# stage_here FILE...: the driver, a worker too, copies for itself; a file
# that differs is kept unless STAGE_FORCE=1, as rdmcp keeps it.  Status 1
# with the reason on stdout if it does not hold them all in the end.
stage_here() {
	local f dst
	mkdir -p "$STAGE_DIR" || { echo "cannot make $STAGE_DIR"; return 1; }
	for f in "$@"; do
		dst=$STAGE_DIR/${f##*/}
		if [ -e "$dst" ] && ! cmp -s "$f" "$dst" && [ "$STAGE_FORCE" = 0 ]; then
			echo "$dst exists and differs (STAGE_FORCE=1 replaces it)"
			return 1
		fi
		cp -p -- "$f" "$dst" || { echo "cannot copy to $dst"; return 1; }
	done
}

report=$(mktemp "${TMPDIR:-/tmp}/$me.XXXXXX") || exit 3
trap 'rm -f "$report"' EXIT

exclude=()
driver_failed=""
if [ -n "$driver" ]; then
	exclude=(-x "$driver")
	driver_failed=$(stage_here "$@") || driver_failed=${driver_failed:-failed}
fi

# -f: the workers file holds the hosts, so every argument is a FILE
rc=0
if [ "$others" -gt 0 ]; then
	"$RDMCP" --json --verify -d "$STAGE_DIR/" -f "$WORKERS_FILE" \
		"${exclude[@]}" --failed-file "$FAILED_FILE" "${force[@]}" \
		"${rdmcp_opts[@]}" -- "$@" >"$report" || rc=$?
else	# the driver is the only worker: nothing to push
	echo '{"event":"summary","seconds":0,"transport":"none"}' >"$report"
	: >"$FAILED_FILE"
fi
# the driver counts as a worker: ok, or failed with its reason
if [ -n "$driver" ] && { [ "$rc" = 0 ] || [ "$rc" = 1 ]; }; then
	jq -nc --arg h "$driver" --arg why "$driver_failed" \
		'{event: "replica", host: $h, ok: ($why == "")} +
		 if $why == "" then {} else {reason: "\($why) (this machine)"} end' \
		>>"$report"
	if [ -n "$driver_failed" ]; then
		bad=$(cat "$FAILED_FILE" 2>/dev/null)
		echo "${bad:+$bad,}$driver" >"$FAILED_FILE"
		rc=1
	fi
fi

case $rc in
0 | 1)
	# the report: one object per worker, then the summary
	if ! jq -r 'select(.event == "replica" and .ok) | .host' "$report" \
		>"$STAGED_WORKERS"; then
		say "cannot read rdmcp's report, or write $STAGED_WORKERS"
		exit 3
	fi
	summary=$(jq -rs '([.[] | select(.event == "replica")] | length) as $n |
		([.[] | select(.event == "replica" and .ok)] | length) as $ok |
		.[] | select(.event == "summary") |
		"\($ok) of \($n) workers staged in \(.seconds) s (\(.transport))"' \
		"$report")
	say "${summary:-no summary from rdmcp}"
	;;
esac

case $rc in
0)
	rm -f "$FAILED_FILE"
	say "every worker holds $* in $STAGE_DIR"
	exit 0
	;;
1)
	jq -r 'select(.event == "replica" and (.ok | not)) |
		"  \(.host): \(.reason)"' "$report" >&2
	say "workers without a copy: $(cat "$FAILED_FILE") (in $FAILED_FILE)"
	say "the others are in $STAGED_WORKERS: run the job there, e.g."
	say "  SPARK_WORKERS=$STAGED_WORKERS or HADOOP_WORKERS=$STAGED_WORKERS"
	exit 1
	;;
2)
	say "rdmcp rejected its arguments (check RDMCP_OPTS and $WORKERS_FILE)"
	exit 2
	;;
3)
	say "rdmcp could not run the transfer (source, key or $FAILED_FILE); no worker is to blame"
	exit 3
	;;
*)
	say "rdmcp ($RDMCP) failed with status $rc"
	exit 3
	;;
esac
