# SPDX-License-Identifier: MIT
# -n/--dry-run contacts and authenticates every host, runs every check of a
# real push (what exists, --force, free space) and creates and sends
# nothing; it prints the plan and a predicted time, and its exit status and
# host files say which hosts would end ok.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
make_file "$src/data" 3000000
echo "precious" >"$(landed 3 "$src/data")"

# snapshot: every path below the hosts, with size and time
snapshot() {
	find "$WORK"/h[0-9]* -printf '%p %s %T@\n' | sort
}

before=$(snapshot)
expect_status 1 "$RDMCP" -n --failed-file "$WORK/bad" --ok-file "$WORK/good" \
	"$src/data" "$(hosts 3)"
grep -qF "127.0.0.[2-3]:$PORT: ok, would take it (2 hosts; dry run)" "$WORK/out" ||
	fail "no 'would take it' line: $(cat "$WORK/out")"
grep -q "^$(host_addr 3):$PORT: FAILED (1 host): .* exists and differs from the source (--force replaces it)" "$WORK/out" ||
	fail "host 3 should be refused: $(cat "$WORK/out")"
grep -q "^dry run: 2 of 3 hosts would take 2.9 MiB, 0 already hold it, 1 would fail; nothing was created or sent" "$WORK/out" ||
	fail "no dry-run summary: $(cat "$WORK/out")"
grep -qE "^plan: [0-9]+ blocks of .*, binomial schedule of [0-9]+ steps for 3 members" "$WORK/out" ||
	fail "no plan: $(cat "$WORK/out")"
grep -qE "^predicted: [0-9.]+ s = set-up [0-9.]+ s \(measured\) \+ [0-9]+ steps x" "$WORK/out" ||
	fail "no prediction: $(cat "$WORK/out")"
grep -q "would fail: $(host_addr 3):$PORT" "$WORK/err" || fail "stderr: $(cat "$WORK/err")"
[ "$(cat "$WORK/bad")" = "$(host_addr 3):$PORT" ] || fail "failed-file: $(cat "$WORK/bad")"
[ "$(cat "$WORK/good")" = "127.0.0.[2-3]:$PORT" ] ||
	fail "ok-file: $(cat "$WORK/good")"
[ "$(snapshot)" = "$before" ] || fail "a dry run changed the hosts: $(diff <(echo "$before") <(snapshot))"
for i in 1 2; do
	grep -q "dry run: every check passed" "$WORK/daemon$i.log" || fail "daemon $i: no check logged"
done
note "3 hosts, 1 with the file already: 2 would take it, 1 would fail, nothing changed"

# with --force all three would; and --bwlimit sets the predicted rate:
# 2.9 MiB at 1 MiB/s is at least 2.8 s whatever the schedule
expect_status 0 "$RDMCP" -n --force --bwlimit 1M --json "$src/data" "$(hosts 3)"
jq -e 'select(.event == "summary") | .dry_run.would == 3 and .dry_run.predicted > 2.8 and
	.dry_run.rate == 1048576 and .sent == 0 and .exit == 0' "$WORK/out" >/dev/null ||
	fail "json: $(cat "$WORK/out")"
[ "$(jq -s '[.[] | select(.event == "replica" and .ok and .dry_run)] | length' "$WORK/out")" = 3 ] ||
	fail "json replicas: $(cat "$WORK/out")"
[ "$(cat "$(landed 3 "$src/data")")" = precious ] || fail "host 3's file was replaced"
[ "$(snapshot)" = "$before" ] || fail "a dry run with --force changed the hosts"

# a host that holds it already says so; a real push then does what the
# dry run said
rm "$(landed 3 "$src/data")"
expect_status 0 "$RDMCP" "$src/data" "$(hosts 1)"
expect_status 0 "$RDMCP" -n "$src/data" "$(hosts 3)"
grep -q "^$(host_addr 1):$PORT: ok, already identical (1 host)" "$WORK/out" ||
	fail "identical: $(cat "$WORK/out")"
grep -q "^dry run: 2 of 3 hosts would take 2.9 MiB, 1 already hold it, 0 would fail" "$WORK/out" ||
	fail "summary: $(cat "$WORK/out")"
[ ! -e "$(landed 2 "$src/data")" ] || fail "host 2 got the file in a dry run"
expect_status 0 "$RDMCP" "$src/data" "$(hosts 3)"
assert_copies 3 "$src/data"
assert_no_temporaries
note "already identical in a dry run; the real push then agrees"

# a destination directory that is not there, and (as root) too little free space
expect_status 1 "$RDMCP" -n -d /nowhere "$src/data" "$(hosts 1)"
grep -q "FAILED" "$WORK/out" || fail "no refusal: $(cat "$WORK/out")"
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$WORK/h4"
	mount -t tmpfs -o size=1m rdmcp-test "$WORK/h4"
	on_exit umount "$WORK/h4"
	start_daemon 4
	wait_listening "$(host_addr 4)" || fail "daemon 4 did not start"
	expect_status 1 "$RDMCP" -n -d /small/ "$src/data" "$(host_addr 4):$PORT"
	grep -q "/small/data: No space left on device (the job needs 3000000 bytes on its file system" "$WORK/out" ||
		fail "free space not checked: $(cat "$WORK/out")"
	[ -z "$(ls -A "$WORK/h4")" ] || fail "the dry run made $(ls -A "$WORK/h4")"
	note "too little free space: refused before anything is sent"
fi
