# SPDX-License-Identifier: MIT
# The example staging scripts (contrib/slurm-stage-example.sh and
# contrib/spark-hadoop-stage-example.sh) against real daemons on
# 127.0.0.2-5, with a made-up Slurm allocation and workers file: the files
# land, a node without a daemon is reported, written to the failed file
# (and drained through scontrol) and gives status 1, and usage errors and
# unreadable sources give 2 and 3; the stage directory is made where it is
# missing, and the Spark driver that is a worker too copies for itself.
# Both scripts are shellcheck-clean.
. "$(dirname "$0")/../lib.sh"
SLURM_SCRIPT=$TOP/contrib/slurm-stage-example.sh
SPARK_SCRIPT=$TOP/contrib/spark-hadoop-stage-example.sh

if command -v shellcheck >/dev/null 2>&1; then
	shellcheck "$SLURM_SCRIPT" "$SPARK_SCRIPT" || fail "shellcheck"
	note "shellcheck: clean"
elif [ "${RDMCP_REQUIRE_ALL:-0}" = 1 ]; then
	fail "shellcheck is not installed (scripts/install-deps.sh installs it)"
else
	note "shellcheck is not installed: not linted"
fi

start_daemons 4	# 127.0.0.2-5; nothing listens on 127.0.0.6
P=$PORT
src=$WORK/src
stage=$WORK/stage
mkdir -p "$src" "$WORK/bin"
make_file "$src/solver" 3000000
chmod 755 "$src/solver"
make_file "$src/input.dat" 70000
chmod 640 "$src/input.dat"
cd "$WORK"

# assert_staged N FILE...: hosts 1..N hold each FILE of $src in $stage,
# same bytes and mode
assert_staged() {
	local n=$1 i f dst
	shift
	for i in $(seq 1 "$n"); do
		for f in "$@"; do
			dst=$(landed "$i" "$stage/$f")
			[ -f "$dst" ] || fail "host $i has no $stage/$f"
			cmp -s "$src/$f" "$dst" || fail "host $i: other bytes in $dst"
			[ "$(stat -c %a "$src/$f")" = "$(stat -c %a "$dst")" ] ||
				fail "host $i: mode $(stat -c %a "$dst") for $f"
		done
	done
}
clear_stage() {
	rm -rf "$WORK"/h*"$stage"
}

# fake srun and scontrol, recording how they were called; srun creates
# the directory on every host's prefix, as 'srun mkdir -p' would on
# every node
cat >"$WORK/bin/srun" <<EOF
#!/bin/sh
echo "srun \$*" >>"$WORK/calls"
for a; do dir=\$a; done
for i in 1 2 3 4 5; do mkdir -p "$WORK/h\$i\$dir"; done
EOF
cat >"$WORK/bin/scontrol" <<EOF
#!/bin/sh
echo "scontrol \$*" >>"$WORK/calls"
EOF
chmod 755 "$WORK/bin/srun" "$WORK/bin/scontrol"
FAKE_PATH=$WORK/bin:$PATH

# no_calls: neither srun nor scontrol was called, but to ask whether the
# batch host is one of the nodes (scontrol show hostnames)
no_calls() {
	! grep -v "^scontrol show hostnames" "$WORK/calls" 2>/dev/null ||
		fail "called: $(cat "$WORK/calls")"
}

# --- Slurm ---------------------------------------------------------------
slurm() {
	env PATH="$FAKE_PATH" RDMCP="$RDMCP" RDMCP_OPTS="-P $P" \
		SLURM_JOB_ID=42 SLURM_JOB_NUM_NODES=4 STAGE_DIR="$stage" \
		"$@"
}

# every node up; the script makes the directory with srun
rm -f "$WORK/calls"
expect_status 0 slurm SLURM_JOB_NODELIST="127.0.0.[2-5]" \
	"$SLURM_SCRIPT" "$src/solver" "$src/input.dat"
assert_staged 4 solver input.dat
grep -qx "srun --ntasks-per-node=1 --nodes=4 mkdir -p $stage" "$WORK/calls" ||
	fail "srun: $(cat "$WORK/calls")"
[ ! -e "$WORK/rdmcp-failed.42" ] || fail "failed file left after success"
grep -q "staged 2 file(s) to $stage" "$WORK/err" || fail "$(cat "$WORK/err")"
note "Slurm: 4 of 4 nodes staged"

# a node without a daemon: status 1, reported, in the failed file,
# drained; the other nodes hold the files
clear_stage
rm -f "$WORK/calls"
expect_status 1 slurm SLURM_JOB_NODELIST="127.0.0.[2-6]" STAGE_DRAIN=1 \
	"$SLURM_SCRIPT" "$src/solver" "$src/input.dat"
assert_staged 4 solver input.dat
[ ! -e "$(landed 5 "$stage/solver")" ] || fail "host 5 got a file"
[ "$(cat "$WORK/rdmcp-failed.42")" = "127.0.0.6" ] ||
	fail "failed file: $(cat "$WORK/rdmcp-failed.42")"
grep -q "nodes without a copy: 127.0.0.6 " "$WORK/err" || fail "$(cat "$WORK/err")"
grep -q "srun --exclude=127.0.0.6" "$WORK/err" || fail "$(cat "$WORK/err")"
grep -qx "scontrol update NodeName=127.0.0.6 State=DRAIN Reason=rdmcp staging failed (job 42)" \
	"$WORK/calls" || fail "scontrol: $(cat "$WORK/calls")"
note "Slurm: a node without a daemon is reported, listed and drained (status 1)"

# without STAGE_DRAIN nothing is drained; an existing directory is used
# as it is (STAGE_MKDIR=0)
clear_stage
prepare_dirs 5 "$stage"
rm -f "$WORK/calls"
expect_status 1 slurm SLURM_JOB_NODELIST="127.0.0.[2-6]" STAGE_MKDIR=0 \
	"$SLURM_SCRIPT" "$src/input.dat"
no_calls
assert_staged 4 input.dat
# STAGE_MKDIR=0 and no directory: rdmcp makes it, with its parents; the
# batch host (not a node here) is not left out: no -x warning
clear_stage
expect_status 0 slurm SLURM_JOB_NODELIST="127.0.0.[2-5]" STAGE_MKDIR=0 \
	STAGE_DIR="$stage/job/42" "$SLURM_SCRIPT" "$src/input.dat"
for i in 1 2 3 4; do
	cmp -s "$src/input.dat" "$(landed "$i" "$stage/job/42/input.dat")" ||
		fail "host $i: STAGE_DIR not made: $(cat "$WORK/err")"
done
! grep -q -- "-x" "$WORK/err" || fail "an -x for no node: $(cat "$WORK/err")"

# usage errors (2) and a sender-side problem (3): nothing is drained
rm -f "$WORK/calls"
expect_status 2 slurm SLURM_JOB_NODELIST= STAGE_DRAIN=1 \
	"$SLURM_SCRIPT" "$src/solver"
grep -q "SLURM_JOB_NODELIST is not set" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 2 slurm SLURM_JOB_NODELIST="127.0.0.[2-5]" "$SLURM_SCRIPT"
expect_status 2 slurm SLURM_JOB_NODELIST="127.0.0.[2-5]" STAGE_DIR=relative \
	"$SLURM_SCRIPT" "$src/solver"
expect_status 2 slurm SLURM_JOB_NODELIST="127.0.0.[2-5]" STAGE_MKDIR=0 \
	RDMCP_OPTS="-P $P --algorithm nosuch" "$SLURM_SCRIPT" "$src/solver"
grep -q "rdmcp rejected its arguments" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 3 slurm SLURM_JOB_NODELIST="127.0.0.[2-5]" STAGE_DRAIN=1 \
	"$SLURM_SCRIPT" "$src/nonexistent"
grep -q "cannot read" "$WORK/err" || fail "$(cat "$WORK/err")"
# no usable key: rdmcp's status 3, not the nodes' fault
expect_status 3 slurm SLURM_JOB_NODELIST="127.0.0.[2-5]" STAGE_MKDIR=0 \
	STAGE_DRAIN=1 RDMCP_KEY="$WORK/nokey" "$SLURM_SCRIPT" "$src/solver"
grep -q "no node is to blame" "$WORK/err" || fail "$(cat "$WORK/err")"
no_calls
note "Slurm: usage errors exit 2, sender problems 3, nothing drained"

# --- Spark / Hadoop ------------------------------------------------------
spark() {
	env PATH="$FAKE_PATH" RDMCP="$RDMCP" RDMCP_OPTS="-P $P" \
		STAGE_DIR="$stage" STAGED_WORKERS="$WORK/staged" \
		FAILED_FILE="$WORK/failed" "$@"
}
# Spark's conf/workers, found through SPARK_HOME; STAGE_DIR is made where
# it is missing
mkdir -p "$WORK/spark/conf"
printf '# workers\n127.0.0.2\n127.0.0.3\n\n127.0.0.4  # rack 2\n127.0.0.5\n' \
	>"$WORK/spark/conf/workers"
clear_stage
expect_status 0 spark SPARK_HOME="$WORK/spark" \
	"$SPARK_SCRIPT" "$src/solver" "$src/input.dat"
assert_staged 4 solver input.dat
[ "$(sort "$WORK/staged" | tr '\n' ' ')" = "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 " ] ||
	fail "staged workers: $(cat "$WORK/staged")"
[ ! -e "$WORK/failed" ] || fail "failed file left after success"
grep -q "4 of 4 workers staged" "$WORK/err" || fail "$(cat "$WORK/err")"
note "Spark: 4 of 4 workers staged, listed one per line"

# Hadoop's workers file with a worker that runs no daemon; the files are
# there already, STAGE_FORCE replaces them
mkdir -p "$WORK/hadoop"
printf '127.0.0.2\n127.0.0.3\n127.0.0.4\n127.0.0.5\n127.0.0.6\n' \
	>"$WORK/hadoop/workers"
make_file "$src/solver" 2000000
expect_status 1 spark HADOOP_CONF_DIR="$WORK/hadoop" STAGE_FORCE=1 \
	"$SPARK_SCRIPT" "$src/solver"
assert_staged 4 solver
[ "$(sort "$WORK/staged" | tr '\n' ' ')" = "127.0.0.2 127.0.0.3 127.0.0.4 127.0.0.5 " ] ||
	fail "staged workers: $(cat "$WORK/staged")"
[ "$(cat "$WORK/failed")" = "127.0.0.6" ] || fail "failed: $(cat "$WORK/failed")"
grep -q "^  127.0.0.6: ." "$WORK/err" || fail "no reason: $(cat "$WORK/err")"
grep -q "workers without a copy: 127.0.0.6" "$WORK/err" || fail "$(cat "$WORK/err")"
grep -q "4 of 5 workers staged" "$WORK/err" || fail "$(cat "$WORK/err")"
note "Hadoop: a worker without a daemon is reported with its reason (status 1)"

# the same staging again: every worker holds it already, and succeeds
expect_status 0 spark WORKERS_FILE="$WORK/spark/conf/workers" \
	"$SPARK_SCRIPT" "$src/solver"
assert_staged 4 solver
grep -q "4 of 4 workers staged" "$WORK/err" || fail "$(cat "$WORK/err")"
note "Spark: the same staging again succeeds (already identical)"

# a different solver without STAGE_FORCE: the existing files stay, every
# worker fails
cp "$src/solver" "$WORK/solver.before"
make_file "$src/solver" 2000000
expect_status 1 spark WORKERS_FILE="$WORK/spark/conf/workers" \
	"$SPARK_SCRIPT" "$src/solver"
[ ! -s "$WORK/staged" ] || fail "staged: $(cat "$WORK/staged")"
grep -q "exists and differs" "$WORK/err" || fail "$(cat "$WORK/err")"
for i in 1 2 3 4; do
	cmp -s "$WORK/solver.before" "$(landed "$i" "$stage/solver")" ||
		fail "host $i: the existing solver was changed"
done

# the driver (this machine) is a worker too: it copies for itself, is left
# out of the push (rdmcp refuses to send to itself: status 2 before), and
# counts as a staged worker
here=$WORK/here
printf '127.0.0.2\n%s\n127.0.0.3\n' "$(hostname)" >"$WORK/with-driver"
clear_stage
expect_status 0 spark WORKERS_FILE="$WORK/with-driver" STAGE_DIR="$here/etl" \
	"$SPARK_SCRIPT" "$src/solver"
cmp -s "$src/solver" "$here/etl/solver" || fail "the driver has no copy: $(cat "$WORK/err")"
for i in 1 2; do
	cmp -s "$src/solver" "$(landed "$i" "$here/etl/solver")" || fail "host $i: no copy"
done
[ "$(sort "$WORK/staged" | tr '\n' ' ')" = "$(printf '%s\n' 127.0.0.2 127.0.0.3 "$(hostname)" | sort | tr '\n' ' ')" ] ||
	fail "staged workers: $(cat "$WORK/staged")"
grep -q "3 of 3 workers staged" "$WORK/err" || fail "$(cat "$WORK/err")"
# ... and keeps its own differing copy without STAGE_FORCE, as rdmcp does
echo other >"$here/etl/solver"
expect_status 1 spark WORKERS_FILE="$WORK/with-driver" STAGE_DIR="$here/etl" \
	"$SPARK_SCRIPT" "$src/solver"
[ "$(cat "$here/etl/solver")" = other ] || fail "the driver's copy was replaced"
[ "$(cat "$WORK/failed")" = "$(hostname)" ] || fail "failed: $(cat "$WORK/failed")"
grep -q "^  $(hostname): $here/etl/solver exists and differs" "$WORK/err" ||
	fail "no reason: $(cat "$WORK/err")"
note "Spark: the driver that is a worker copies for itself"

expect_status 2 spark STAGE_DIR= WORKERS_FILE="$WORK/hadoop/workers" \
	"$SPARK_SCRIPT" "$src/solver"
expect_status 2 spark SPARK_HOME= HADOOP_CONF_DIR= HADOOP_HOME= \
	"$SPARK_SCRIPT" "$src/solver"
grep -q "no workers file" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 3 spark WORKERS_FILE="$WORK/hadoop/workers" \
	"$SPARK_SCRIPT" "$src/nonexistent"
note "Spark/Hadoop: usage errors exit 2, an unreadable source 3"
assert_no_temporaries
