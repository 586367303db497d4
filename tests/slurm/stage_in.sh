# SPDX-License-Identifier: MIT
# The Slurm stage-in example (contrib/) under a real Slurm: a controller
# and 12 slurmd (scripts/slurm-cluster.sh), an rdmcp daemon on every node.
#   A, B  two sbatch jobs of 8 nodes, node[01-08] and node[05-12], running
#         at once (each waits for the other to start): each stages a binary
#         and a data file with the example, as shipped, with only paths
#         set, then runs the staged binary on every node with srun, which
#         checks the data; every node's disk holds both jobs' files, and
#         only those of its jobs.
#   C     a job on node[09-12] with node11's rdmcp daemon down, STAGE_DRAIN=1:
#         the example exits 1, names node11 in its failed file, Slurm
#         drains node11 with the example's reason, and the job goes on
#         without it (srun --exclude), as the example documents; its report
#         agrees with every node's disk.  Then node11 is 'drained' and a
#         job that asks for it pends (ReqNodeNotAvail).
#   D     a job whose source cannot be read: the example exits 3, the job
#         fails, no node is drained.
#   E     the Spark/Hadoop example from the login node, with a workers
#         file of node names: 4 of 4 staged, then node11 reported; then
#         from node01, a worker itself, which copies for itself.
. "$(dirname "$0")/../lib.sh"
need_root
# The example under test: the one variable to change if it is renamed.
STAGE_SCRIPT=${STAGE_SCRIPT:-$TOP/contrib/slurm-stage-example.sh}
SPARK_SCRIPT=${SPARK_SCRIPT:-$TOP/contrib/spark-hadoop-stage-example.sh}
SLURM=$TOP/scripts/slurm-cluster.sh

for c in slurmctld slurmd sbatch munged; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "  $TEST_NAME: skipped: no $c (scripts/install-deps.sh installs Slurm and munge)"
		exit 77
	fi
done
[ -x "$STAGE_SCRIPT" ] || fail "no stage-in example at $STAGE_SCRIPT"

export RDMCP_NS=rds$$ SLURM_CLUSTER_DIR=$WORK/slurm SLURM_CLUSTER_LIFETIME=600
SD=$SLURM_CLUSTER_DIR
LOCAL=$SD/local			# node-local on every node (its disk)
JOBS=$WORK/jobs			# shared: job scripts, outputs, the jobs' cwd
on_exit "$SLURM" down
started=$SECONDS
# 100 Mbit/s: each push takes about a second, so A's and B's overlap
"$SLURM" up 12 100mbit || fail "the Slurm cluster did not come up"
note "Slurm up: 12 nodes in $((SECONDS - started)) s"

slurm() { "$SLURM" run "$@"; }
node() { printf 'node%02d' "$1"; }
disk() { echo "$SD/disk/$(node "$1")"; }
# hostnames LIST: one node name a line
hostnames() { slurm scontrol show hostnames "$1"; }

# rdmcp daemons on every node, in the node's context (its address, name,
# disk), writing below $LOCAL; lib.sh stops them at the end and requires
# a clean exit
for k in $(seq 1 12); do
	mkdir -p "$SD/rdmcpd"
	"$SLURM" on "$(node "$k")" "$RDMCP" --serve -v --root "$LOCAL" \
		--state-dir "$SD/rdmcpd/$(node "$k")" 2>>"$WORK/daemon$k.log" &
	DAEMON_PIDS[$k]=$!
done
for k in $(seq 1 12); do
	listening=0
	for _ in $(seq 1 100); do
		if slurm timeout 5 bash -c "exec 3<>/dev/tcp/$(node "$k")/7471" 2>/dev/null; then
			listening=1
			break
		fi
		sleep 0.05
	done
	[ "$listening" = 1 ] || fail "rdmcp daemon on $(node "$k") did not start: $(daemon_log_tail "$k")"
done

# the files to stage: a binary (sha256sum, which the job then runs from
# the stage directory) and a data file; B stages other data
mkdir -p "$WORK/src" "$JOBS"
cp /usr/bin/sha256sum "$WORK/src/sha256sum"
chmod 755 "$WORK/src/sha256sum"
make_file "$WORK/src/dataA" $((12 << 20))
make_file "$WORK/src/dataB" $((12 << 20))
chmod 640 "$WORK/src/dataA" "$WORK/src/dataB"

# The batch script: the documented use of the example, at the top of a
# job.  Arguments: TAG, the TAG of a job to wait for ('' for none), the
# files.  It records the example's status and when it ran, then runs
# the staged sha256sum on every node (without the failed ones), each
# printing "NODE HASH" of the staged data.
cat >"$JOBS/stage.sbatch" <<'EOF'
#!/bin/bash
tag=$1 other=$2
shift 2
touch "started.$tag"
if [ -n "$other" ]; then
	for _ in $(seq 1 300); do
		[ -e "started.$other" ] && break
		sleep 0.1
	done
	[ -e "started.$other" ] || { echo "job $other did not start in 30 s"; exit 90; }
fi
stage=$LOCAL/$SLURM_JOB_ID
data=$(basename "${@: -1}")
date +%s.%N >"t0.$tag"
STAGE_DIR=$stage "$STAGE_SCRIPT" "$@"
rc=$?
date +%s.%N >"t1.$tag"
echo "$rc" >"status.$tag"
check() {
	srun --ntasks-per-node=1 "$@" sh -c \
		'echo "$(hostname -s) $("$1/sha256sum" "$1/$2" | cut -d" " -f1)"' \
		sh "$stage" "$data" >"result.$tag"
}
case $rc in
0) check ;;
1)
	bad=$(cat "rdmcp-failed.$SLURM_JOB_ID")
	check --exclude="$bad" \
		--nodes=$((SLURM_JOB_NUM_NODES - $(scontrol show hostnames "$bad" | wc -l)))
	;;
*) exit 1 ;;
esac
EOF
chmod 755 "$JOBS/stage.sbatch"
cd "$JOBS" || fail "no $JOBS"

# submit TAG SBATCH-OPTIONS... -- SCRIPT-ARGS...: the job's id
submit() {
	local tag=$1 opts=()
	shift
	while [ "$1" != -- ]; do
		opts+=("$1")
		shift
	done
	shift
	env STAGE_SCRIPT="$STAGE_SCRIPT" LOCAL="$LOCAL" RDMCP="$RDMCP" \
		"$SLURM" run sbatch --parsable -D "$JOBS" -J "$tag" --time=5 \
		-o "$JOBS/out.$tag" "${opts[@]}" "$JOBS/stage.sbatch" "$tag" "$@" ||
		fail "sbatch of job $tag"
}
# job_field ID FIELD: FIELD of 'scontrol show job'
job_field() {
	slurm scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}
# wait_job ID SECS: until job ID has ended; its state
wait_job() {
	local st
	for _ in $(seq 1 $(($2 * 5))); do
		st=$(job_field "$1" JobState)
		case $st in
		PENDING | RUNNING | CONFIGURING | COMPLETING | "") sleep 0.2 ;;
		*) echo "$st"; return 0 ;;
		esac
	done
	slurm scontrol show job "$1" >&2
	fail "job $1 still $st after $2 s"
}
# expect_job ID STATE EXIT TAG: job ID ended in STATE with ExitCode EXIT
expect_job() {
	local st
	st=$(wait_job "$1" 120)
	if [ "$st" != "$2" ] || [ "$(job_field "$1" ExitCode)" != "$3" ]; then
		cat "$JOBS/out.$4" >&2
		fail "job $4 ($1): $st, exit $(job_field "$1" ExitCode); expected $2, $3"
	fi
}

# check_result TAG DATA NODE...: the staged binary ran on exactly these
# nodes and found DATA there
check_result() {
	local tag=$1 want got
	want=$(sha256sum <"$2" | cut -d' ' -f1)
	shift 2
	got=$(sort "$JOBS/result.$tag" 2>/dev/null)
	[ "$got" = "$(for n in "$@"; do echo "$n $want"; done | sort)" ] ||
		fail "job $tag: the staged binary found '$got' (want $want on $*); $(cat "$JOBS/out.$tag")"
}
# check_disks JOBID DATA OK-NODES: the nodes of OK-NODES hold the job's
# binary and DATA, same bytes and mode; every other node holds nothing of
# that job but, at most, an empty stage directory
check_disks() {
	local id=$1 data=$2 ok=" ${*:3} " k n f
	for k in $(seq 1 12); do
		n=$(node "$k")
		if [[ $ok == *" $n "* ]]; then
			for f in "$WORK/src/sha256sum" "$data"; do
				cmp -s "$f" "$(disk "$k")/$id/$(basename "$f")" ||
					fail "$n: no copy of $(basename "$f") for job $id"
				[ "$(stat -c %a "$f")" = "$(stat -c %a "$(disk "$k")/$id/$(basename "$f")")" ] ||
					fail "$n: $(basename "$f") has another mode"
			done
		elif [ -e "$(disk "$k")/$id" ] && [ -n "$(ls -A "$(disk "$k")/$id")" ]; then
			fail "$n holds files of job $id: $(ls -A "$(disk "$k")/$id")"
		fi
	done
	f=$(find "$SD/disk" -name '.*.rdmcp-*' | head -3)
	[ -z "$f" ] || fail "temporaries left: $f"
}

# --- A and B: two jobs on overlapping nodes at once ------------------------
a=$(submit A -N 8 -w 'node[01-08]' -- B "$WORK/src/sha256sum" "$WORK/src/dataA")
b=$(submit B -N 8 -w 'node[05-12]' -- A "$WORK/src/sha256sum" "$WORK/src/dataB")
expect_job "$a" COMPLETED 0:0 A
expect_job "$b" COMPLETED 0:0 B
[ "$(cat status.A) $(cat status.B)" = "0 0" ] ||
	fail "the example's status: A $(cat status.A), B $(cat status.B)"
# the two stagings overlapped in time
awk -v a0="$(cat t0.A)" -v a1="$(cat t1.A)" -v b0="$(cat t0.B)" -v b1="$(cat t1.B)" \
	'BEGIN { exit !(a0 < b1 && b0 < a1) }' ||
	fail "A's staging ($(cat t0.A)..$(cat t1.A)) and B's ($(cat t0.B)..$(cat t1.B)) did not overlap"
mapfile -t nodes_a < <(hostnames 'node[01-08]')
mapfile -t nodes_b < <(hostnames 'node[05-12]')
check_result A "$WORK/src/dataA" "${nodes_a[@]}"
check_result B "$WORK/src/dataB" "${nodes_b[@]}"
check_disks "$a" "$WORK/src/dataA" "${nodes_a[@]}"
check_disks "$b" "$WORK/src/dataB" "${nodes_b[@]}"
grep -q "staged 2 file(s) to $LOCAL/$a on node\[01-08\]" out.A || fail "A: $(cat out.A)"
if [ -e "rdmcp-failed.$a" ] || [ -e "rdmcp-failed.$b" ]; then
	fail "a failed file after success"
fi
note "A, B: two 8-node jobs on overlapping nodes staged at once; the staged binary checked the data on 12 nodes"

# --- C: a node whose rdmcp daemon is down ---------------------------------
stop_daemon 11
c=$(STAGE_DRAIN=1 submit C -N 4 -w 'node[09-12]' -- "" "$WORK/src/sha256sum" "$WORK/src/dataA")
expect_job "$c" COMPLETED 0:0 C
[ "$(cat status.C)" = 1 ] || fail "C: the example exited $(cat status.C), not 1: $(cat out.C)"
[ "$(cat "rdmcp-failed.$c")" = node11 ] || fail "C: failed file: $(cat "rdmcp-failed.$c")"
grep -q "nodes without a copy: node11 " out.C || fail "C: $(cat out.C)"
grep -q "run the job without them: srun --exclude=node11 --nodes=3 " out.C ||
	fail "C: the hint: $(cat out.C)"
state=$(slurm scontrol -o show node node11)
[[ $state == *" State="*DRAIN* ]] || fail "node11 not drained: $state"
[[ $state == *"Reason=rdmcp staging failed (job $c)"* ]] || fail "node11's reason: $state"
[ "$(slurm sinfo -h -t drain -o '%N')" = node11 ] ||
	fail "drained: $(slurm sinfo -h -t drain -o '%N')"
check_result C "$WORK/src/dataA" node09 node10 node12
# Slurm acts on the drain: node11 is drained once C has ended, and a job
# that asks for it is held, not started there
[ "$(slurm sinfo -h -n node11 -o '%T')" = drained ] ||
	fail "node11 after C: $(slurm sinfo -h -n node11 -o '%T')"
p=$(slurm sbatch --parsable -J P -w node11 -N 1 --time=1 -o /dev/null --wrap true) ||
	fail "sbatch of a job on node11"
for _ in $(seq 1 100); do
	[[ $(job_field "$p" Reason) == ReqNodeNotAvail* ]] && break
	sleep 0.2
done
why="$(job_field "$p" JobState) $(job_field "$p" Reason)"
slurm scancel "$p"
[[ $why == "PENDING ReqNodeNotAvail"*node11* ]] || fail "a job on drained node11: $why"
# rdmcp's report in the job's output, against the disks
ok=$(sed -n 's/^\([^ ]*\): ok.*/\1/p' out.C)
bad=$(sed -n 's/^\([^ ]*\): FAILED.*/\1/p' out.C)
[ "$(hostnames "$ok" | tr '\n' ' ')/$bad" = "node10 node12 /node11" ] ||
	fail "C: the report says ok '$ok', FAILED '$bad': $(cat out.C)"
check_disks "$c" "$WORK/src/dataA" node09 node10 node12
note "C: node11 without a daemon: status 1, listed, drained by the example (Slurm then holds a job that asks for it), the job ran on the 3 others; report = disks"

# --- D: a source that cannot be read --------------------------------------
d=$(STAGE_DRAIN=1 submit D -N 2 -w 'node[09-10]' -- "" "$WORK/src/nonexistent")
expect_job "$d" FAILED 1:0 D
[ "$(cat status.D)" = 3 ] || fail "D: the example exited $(cat status.D), not 3: $(cat out.D)"
[ "$(slurm sinfo -h -t drain -o '%N')" = node11 ] ||
	fail "D drained nodes: $(slurm sinfo -h -t drain -o '%N')"
note "D: an unreadable source: status 3, the job failed, nothing drained"

# --- E: the Spark/Hadoop example against a workers file of node names ----
printf '# workers\nnode01\nnode02\nnode03  # rack 2\nnode04\n' >"$WORK/workers"
for k in 1 2 3 4 11; do
	mkdir -p "$(disk "$k")/spark"
done
spark() {
	env RDMCP="$RDMCP" STAGE_DIR="$LOCAL/spark" STAGED_WORKERS="$WORK/staged" \
		FAILED_FILE="$WORK/failed" "$@"
}
expect_status 0 spark WORKERS_FILE="$WORK/workers" "$SLURM" run "$SPARK_SCRIPT" \
	"$WORK/src/sha256sum" "$WORK/src/dataA"
[ "$(sort "$WORK/staged" | tr '\n' ' ')" = "node01 node02 node03 node04 " ] ||
	fail "E: staged: $(cat "$WORK/staged")"
for k in 1 2 3 4; do
	cmp -s "$WORK/src/dataA" "$(disk "$k")/spark/dataA" || fail "E: $(node "$k") has no copy"
done
echo node11 >>"$WORK/workers"
expect_status 1 spark WORKERS_FILE="$WORK/workers" "$SLURM" run "$SPARK_SCRIPT" \
	"$WORK/src/dataB"
[ "$(cat "$WORK/failed")" = node11 ] || fail "E: failed: $(cat "$WORK/failed")"
[ ! -e "$(disk 11)/spark/dataB" ] || fail "E: node11 got a file"
note "E: the Spark/Hadoop example stages to workers by name; node11 reported"
# ... and from a driver that is a worker too (node01): it copies for
# itself, pushes to the others, and counts itself as staged
printf 'node01\nnode02\nnode03\nnode04\n' >"$WORK/workers"
expect_status 0 spark WORKERS_FILE="$WORK/workers" STAGE_DIR="$LOCAL/spark2" \
	"$SLURM" on node01 "$SPARK_SCRIPT" "$WORK/src/sha256sum" "$WORK/src/dataA"
grep -q "4 of 4 workers staged" "$WORK/err" || fail "E: driver a worker: $(cat "$WORK/err")"
[ "$(sort "$WORK/staged" | tr '\n' ' ')" = "node01 node02 node03 node04 " ] ||
	fail "E: driver a worker, staged: $(cat "$WORK/staged")"
for k in 1 2 3 4; do
	for f in sha256sum dataA; do
		cmp -s "$WORK/src/$f" "$(disk "$k")/spark2/$f" || fail "E: $(node "$k") has no $f"
	done
done
note "E: the Spark/Hadoop driver on node01, a worker too, copied for itself and pushed to 3"
note "took $((SECONDS - started)) s"
