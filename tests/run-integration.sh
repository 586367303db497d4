#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-integration.sh DIR: run every DIR/*.sh test, each under a time limit,
# and report.  Exit status 0 only if all passed.  Tests that need root (network
# namespaces) skip themselves with status 77 when not run as root; that is
# reported, and counts as a failure when RDMCP_REQUIRE_ALL=1 (CI).
set -u
dir=$1
limit=${RDMCP_TEST_TIMEOUT:-600}
pass=0 failed=() skipped=()
for t in "$dir"/*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "$t" .sh)
	start=$(date +%s%N)
	timeout -k 10 "$limit" bash "$t"
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s%N)" 'BEGIN { print (b - a) / 1e9 }')
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS %-28s %6.1f s\n' "$name" "$secs" ;;
	77) skipped+=("$name"); printf 'SKIP %-28s (needs root)\n' "$name" ;;
	124) failed+=("$name"); printf 'FAIL %-28s timed out after %s s\n' "$name" "$limit" ;;
	*) failed+=("$name"); printf 'FAIL %-28s (status %d)\n' "$name" "$rc" ;;
	esac
done
echo "$dir: $pass passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
[ ${#failed[@]} -eq 0 ] || exit 1
if [ ${#skipped[@]} -gt 0 ] && [ "${RDMCP_REQUIRE_ALL:-0}" = 1 ]; then
	echo "skipped tests are not allowed here (RDMCP_REQUIRE_ALL=1)"
	exit 1
fi
exit 0
