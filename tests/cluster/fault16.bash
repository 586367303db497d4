# SPDX-License-Identifier: MIT
# Shared by the N=16 fault tests (relay_kill16.sh, relay_freeze16.sh,
# link_cut16.sh):
# a 16-host binomial pipeline (the sender on host 1, daemons on hosts
# 2..16; FAULT_ALG=chain for the chain rdmcp picks by itself for a file
# this size) on an emulated 200 Mbit/s network, a fault injected into the
# relay of rank 1 (host 2) mid-transfer, and what must follow: everyone
# learns of it in bounded time, the report matches the disks, nothing is
# left behind, and the daemons go on serving.  Source after lib.sh.

N=16
VICTIM=2	# rank 1: relays from the first step on

# fault_setup: the cluster, its daemons and a 32 MiB source (about 1.5 s
# of sending at 200 Mbit/s, so the fault lands mid-transfer).
fault_setup() {
	need_root
	cluster_up $N 200mbit
	cluster_daemons $N --log-time epoch	# member_ends reads seconds
	SRC=$WORK/src
	mkdir -p "$SRC"
	prepare_dirs $N "$SRC"
	make_file "$SRC/data" $((32 << 20))
}

# now_us: wall-clock microseconds (the daemons' log stamps are too).
now_us() {
	echo "${EPOCHREALTIME/./}"
}

# stamp_lines: each input line prefixed with the time it was read (the
# sender flushes each report line as it learns the outcome).
stamp_lines() {
	local line
	while IFS= read -r line; do
		printf '%s %s\n' "$(now_us)" "$line"
	done
}

# fault_push OPTIONS...: start the push in the background with --retries
# 0; its stamped report goes to $WORK/report.  Sets PUSH_PID.
fault_push() {
	rm -f "$WORK/push.rc"
	{
		local rc=0
		on_host 1 "$RDMCP" -v --retries 0 -a "${FAULT_ALG:-binomial}" \
			"$@" "$SRC/data" \
			"$(cluster_hosts $N)" 2>"$WORK/push.err" || rc=$?
		echo "$rc" >"$WORK/push.rc"
	} | stamp_lines >"$WORK/report" &
	PUSH_PID=$!
}

# wait_mid_transfer: until the victim's daemon has started the job (it
# logs its rank), then a further 0.5 s; fails after 10 s.
wait_mid_transfer() {
	wait_grep "rank 1 of" "$WORK/daemon$VICTIM.log" 10 ||
		fail "host $VICTIM never started the job"
	sleep 0.5
}

# wait_push LIMIT_S: wait for the sender (fails if it runs past LIMIT_S
# seconds after the fault); sets PUSH_RC, and SENDER_MS, the time from the
# fault to the sender's last report line (its summary, every outcome
# reported).
wait_push() {
	local t
	for t in $(seq 1 $(($1 * 10))); do
		kill -0 "$PUSH_PID" 2>/dev/null || break
		sleep 0.1
	done
	# (the cluster's removal kills the sender if it hangs)
	kill -0 "$PUSH_PID" 2>/dev/null &&
		fail "the sender still runs $1 s after the fault"
	wait "$PUSH_PID" || true
	PUSH_RC=$(cat "$WORK/push.rc")
	SENDER_MS=$(stamp_ms "$(tail -1 "$WORK/report" | awk '{ print $1 }')")
}

# stamp_ms US: milliseconds from the fault to the stamp US.
stamp_ms() {
	echo $(( ($1 - FAULT_US) / 1000 ))
}

# report_line I: host I's line of the stamped report ("STAMP HOST STATUS
# SECONDS s ..."; -v), exactly one.
report_line() {
	local lines
	lines=$(grep -E "^[0-9]+ $(cluster_addr "$1"):$PORT +(ok|FAILED) +[0-9.]+ s" \
		"$WORK/report" || true)
	[ "$(printf '%s\n' "$lines" | grep -c .)" -eq 1 ] ||
		fail "host $1 is reported $(printf '%s\n' "$lines" | grep -c .) times: $(cat "$WORK/report")"
	printf '%s\n' "$lines"
}

# check_report: every host is reported once; an ok host holds an identical
# file, any other has neither the file nor a temporary (but for the
# victim: a killed daemon cannot remove its own, a frozen or cut off one
# has not yet, see check_victim_recovers).
check_report() {
	local i line status nok=0 first
	for i in $(seq 2 $N); do
		line=$(report_line "$i")
		status=$(echo "$line" | awk '{ print $3 }')
		case $status in
		ok)
			nok=$((nok + 1))
			cmp -s "$SRC/data" "$(landed "$i" "$SRC/data")" ||
				fail "host $i reported ok without a good copy"
			;;
		FAILED)
			[ ! -e "$(landed "$i" "$SRC/data")" ] ||
				fail "host $i reported FAILED but has the file"
			;;
		*) fail "host $i: '$line'" ;;
		esac
		[ "$i" -eq "$VICTIM" ] && continue
		[ -z "$(find "$WORK/h$i" -name '.*.rdmcp-*' | head -1)" ] ||
			fail "host $i left temporaries"
	done
	echo "$(report_line $VICTIM)" | grep -q FAILED ||
		fail "the victim is not reported failed"
	first=$(grep FAILED "$WORK/report" | head -1 | awk '{ print $1 }')
	FIRST_FAILED_MS=$(stamp_ms "$first")
	note "report: $nok of $((N - 1)) hosts ok, $((N - 1 - nok)) FAILED, matching their disks"
}

# member_ends I: the stamp of host I's first log line saying its job ended
# without a copy (failed, aborted or discarded), empty if none.
member_ends() {
	sed -n -E 's/^rdmcp: ([0-9]+)\.([0-9]{6}) (warning: )?job [^ ]+ (failed|ended by the sender|the sender went away).*/\1\2/p' \
		"$WORK/daemon$1.log" | head -1
}

# check_members BOUND_MS: every surviving member that did not complete
# logged the end of its job within BOUND_MS of the fault; prints the
# spread.  Sets MEMBERS_MAX_MS.
check_members() {
	local i us ms all=() min=999999 max=0
	for i in $(seq 2 $N); do
		[ "$i" -eq "$VICTIM" ] && continue
		report_line "$i" | grep -q " ok " && continue
		us=$(member_ends "$i")
		[ -n "$us" ] || fail "host $i never logged the end of its job: $(tail -3 "$WORK/daemon$i.log")"
		ms=$(stamp_ms "$us")
		[ "$ms" -le "$1" ] || fail "host $i learnt of it after $ms ms (bound $1)"
		all+=("$ms")
		[ "$ms" -lt "$min" ] && min=$ms
		[ "$ms" -gt "$max" ] && max=$ms
	done
	MEMBERS_MAX_MS=$max
	[ ${#all[@]} -eq 0 ] && { note "members: every survivor completed"; return 0; }
	note "members: ${#all[@]} survivors aborted/discarded their job $min..$max ms after the fault (each: ${all[*]})"
}

# check_timed_out WHAT: after a fault only --timeout ($TIMEOUT s) can
# tell, the sender exits 1 with a report matching the disks, noticed by the
# timeout (not before half of it) and within $BOUND ms, as did every
# surviving member.
check_timed_out() {
	wait_push 30
	note "$1; the sender exited $PUSH_RC"
	[ "$PUSH_RC" -eq 1 ] || fail "exit $PUSH_RC: $(cat "$WORK/report" "$WORK/push.err")"
	check_report
	note "sender: first FAILED line after $FIRST_FAILED_MS ms, every outcome reported after $SENDER_MS ms (-t $TIMEOUT, bound $BOUND ms)"
	[ "$FIRST_FAILED_MS" -ge $(( TIMEOUT * 1000 / 2 )) ] ||
		fail "noticed after $FIRST_FAILED_MS ms: not by the timeout? $(cat "$WORK/report")"
	[ "$SENDER_MS" -le "$BOUND" ] || fail "the sender took $SENDER_MS ms to report"
	check_members "$BOUND"
}

# follow_up HOSTS_FROM_TO...: a fresh push of a new file to the given
# hosts (by index) succeeds: the daemons still serve.
follow_up() {
	local list="" i
	make_file "$SRC/again" 100000
	for i in "$@"; do
		list="$list${list:+,}$(cluster_addr "$i"):$PORT"
	done
	expect_status 0 on_host 1 "$RDMCP" -t 5 "$SRC/again" "$list"
	for i in "$@"; do
		cmp -s "$SRC/again" "$(landed "$i" "$SRC/again")" ||
			fail "host $i: no copy in the follow-up transfer"
	done
	note "follow-up transfer to $# hosts: ok"
}

# check_victim_recovers: once resumed, the victim's daemon ends the job it
# was in (within 10 s), removes its temporaries and logs no other error.
check_victim_recovers() {
	local t us
	for t in $(seq 1 100); do
		us=$(member_ends $VICTIM)
		[ -n "$us" ] && break
		sleep 0.1
	done
	[ -n "$us" ] || fail "host $VICTIM never ended its job: $(tail -3 "$WORK/daemon$VICTIM.log")"
	note "host $VICTIM itself ended its job $(stamp_ms "$us") ms after the fault: $(grep -o 'job [^ ]* \(failed\|ended\|the sender\).*' "$WORK/daemon$VICTIM.log" | head -1)"
	for t in $(seq 1 50); do
		[ -z "$(find "$WORK/h$VICTIM" -name '.*.rdmcp-*' | head -1)" ] && break
		sleep 0.1
	done
	[ -z "$(find "$WORK/h$VICTIM" -name '.*.rdmcp-*' | head -1)" ] ||
		fail "host $VICTIM kept its temporaries"
	[ ! -e "$(landed $VICTIM "$SRC/data")" ] || fail "host $VICTIM has the file"
}
