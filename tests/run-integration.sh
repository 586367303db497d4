#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-integration.sh DIR: run every DIR/*.sh test, each under a time limit,
# RDMCP_TEST_JOBS of them at once (default 3; 1 runs them one after the
# other), and report.  A test's output is printed whole when it ends, with
# its verdict.  Exit status 0 only if all passed.  Tests that need root
# (network namespaces) skip themselves with status 77 when not run as
# root; that is reported, and counts as a failure when RDMCP_REQUIRE_ALL=1
# (CI).
#
# Tests may run at once: each has a port of its own (two: tests and
# benches use PORT and PORT + 1), given here by its place in the run,
# below Linux's ephemeral ports, and a scratch directory of its own, and
# looks only at the processes it started.  A directory whose tests share something else
# (network namespaces: tests/cluster) sets RDMCP_TEST_JOBS=1.
set -u
dir=$1
limit=${RDMCP_TEST_TIMEOUT:-600}
jobs=${RDMCP_TEST_JOBS:-3}
logs=$(mktemp -d "${TMPDIR:-/tmp}/rdmcp-run.XXXXXX")
trap 'rm -rf "$logs"' EXIT
pass=0 failed=() skipped=()
declare -A running=()	# pid -> test name
total=0
port_fixed=${RDMCP_TEST_PORT:-}
port_base=$((10000 + ($$ % 100) * 200))

# run_one NAME FILE: the test, its output and how it ended in $logs/NAME.*
run_one() {
	local start rc
	start=$(date +%s%N)
	timeout -k 10 "$limit" bash "$2" >"$logs/$1.out" 2>&1 &
	echo "$!" >"$logs/$1.pid"
	wait "$!"
	rc=$?
	rm -f "$logs/$1.pid"
	awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { print (b - a) / 1e9 }' \
		>"$logs/$1.secs"
	return "$rc"
}

# finish: wait for one running test and report it
finish() {
	local pid name rc=0 secs
	wait -n -p pid "${!running[@]}" || rc=$?
	name=${running[$pid]}
	unset "running[$pid]"
	secs=$(cat "$logs/$name.secs" 2>/dev/null || echo 0)
	cat "$logs/$name.out"
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-28s %6.1f s\n' "$name" "$secs" ;;
	77) skipped+=("$name"); printf 'SKIP %-28s (needs root)\n' "$name" ;;
	124) failed+=("$name"); printf 'FAIL %-28s timed out after %s s\n' "$name" "$limit" ;;
	*) failed+=("$name"); printf 'FAIL %-28s (status %d)\n' "$name" "$rc" ;;
	esac
}

# interrupted (^C reaches this shell, not the tests: each timeout is a
# process group of its own): pass it on to every test's timeout, which
# sends it to the test's group, so that each test's clean-up runs (its
# daemons, namespaces, clusters); timeout kills the group 10 s later at
# the latest
# shellcheck disable=SC2317 # run by the trap
interrupted() {
	local f name alive pids=()
	trap - INT TERM
	for f in "$logs"/*.pid; do
		[ -e "$f" ] && pids+=("$(cat "$f")")
	done
	[ ${#pids[@]} -eq 0 ] || kill -TERM "${pids[@]}" 2>/dev/null
	# until every timeout has gone (not 'wait': the runners' own waits
	# are cut short by the signal), 30 s at most
	for _ in $(seq 1 300); do
		alive=0
		for f in "${pids[@]}"; do
			kill -0 "$f" 2>/dev/null && alive=1
		done
		[ "$alive" = 1 ] || break
		sleep 0.1
	done
	for name in "${running[@]}"; do
		cat "$logs/$name.out"
		printf 'STOP %-28s interrupted\n' "$name"
	done
	echo "$dir: interrupted"
	exit 130
}
trap interrupted INT TERM

for t in "$dir"/*.sh; do
	[ -e "$t" ] || continue
	while [ "${#running[@]}" -ge "$jobs" ]; do
		finish
	done
	name=$(basename "$t" .sh)
	total=$((total + 1))
	RDMCP_TEST_PORT=${port_fixed:-$((port_base + 2 * total))} run_one "$name" "$t" &
	running[$!]=$name
done
while [ "${#running[@]}" -gt 0 ]; do
	finish
done
echo "$dir: $pass passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
if [ $((pass + ${#failed[@]} + ${#skipped[@]})) -ne "$total" ]; then
	echo "$dir: $total tests started, but only $((pass + ${#failed[@]} + ${#skipped[@]})) reported"
	exit 1
fi
[ ${#failed[@]} -eq 0 ] || exit 1
if [ ${#skipped[@]} -gt 0 ] && [ "${RDMCP_REQUIRE_ALL:-0}" = 1 ]; then
	echo "skipped tests are not allowed here (RDMCP_REQUIRE_ALL=1)"
	exit 1
fi
exit 0
