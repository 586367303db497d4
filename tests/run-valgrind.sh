#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run-valgrind.sh TEST...: run these integration tests with every daemon
# under valgrind (memcheck, full leak check), then read every daemon's
# valgrind log.  Fails on any memory error or any definite or indirect
# leak.  The tests stop their daemons with SIGTERM, so that valgrind
# reports; a daemon a test kills with SIGKILL on purpose leaves a log
# without a summary, which is counted but cannot be checked.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
logs=$top/build/valgrind
rm -rf "$logs" && mkdir -p "$logs" && chmod 1777 "$logs"
export RDMCP_DAEMON_WRAP="valgrind --error-exitcode=99 --leak-check=full \
--errors-for-leak-kinds=definite,indirect --num-callers=30 \
--log-file=$logs/%p.log"
rc=0
for t in "$@"; do
	start=$(date +%s)
	if timeout -k 10 "${RDMCP_TEST_TIMEOUT:-300}" bash "$top/tests/integration/$t.sh"; then
		echo "PASS $t under valgrind ($(($(date +%s) - start)) s)"
	else
		echo "FAIL $t under valgrind"
		rc=1
	fi
done
checked=0 killed=0 bad=()
for f in "$logs"/*.log; do
	[ -e "$f" ] || continue
	if ! grep -q "ERROR SUMMARY" "$f"; then
		killed=$((killed + 1))
		continue
	fi
	checked=$((checked + 1))
	if ! grep -q "ERROR SUMMARY: 0 errors" "$f" ||
	   grep -Eq "(definitely|indirectly) lost: [1-9]" "$f"; then
		bad+=("$f")
	fi
done
for f in "${bad[@]}"; do
	echo "--- $f"
	cat "$f"
done
echo "check-valgrind: $checked daemon logs checked, ${#bad[@]} with errors or leaks, $killed daemons killed by their test (unchecked)"
[ "$checked" -gt 0 ] || { echo "check-valgrind: no daemon ran under valgrind"; exit 1; }
[ ${#bad[@]} -eq 0 ] && [ "$rc" -eq 0 ]
