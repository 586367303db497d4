# SPDX-License-Identifier: MIT
# The report as an admin of clush and pdsh reads it: one line per
# distinct outcome with its hosts as a compressed host list, complete
# copies first, failures after in the order of the host list; per-host
# lines only with -v, which also says what is sent and how, and the
# set-up time; -vv adds addresses and ranks; -q only the failures.
. "$(dirname "$0")/../lib.sh"
start_daemons 4
src=$WORK/src
mkdir -p "$src"
prepare_dirs 4 "$src"
make_file "$src/data" 100000
dead=127.0.0.9:$PORT
list=$(hosts 4),$dead
clear() { rm -f "$WORK"/h*"$src"/data; }
# host 3 holds another data: refused without --force
echo other >"$(landed 3 "$src/data")"

expect_status 1 "$RDMCP" --retries 0 "$src/data" "$list"
cat >"$WORK/want" <<WANT
127.0.0.[2-3,5]:$PORT: ok (3 hosts, TIMES)
127.0.0.4:$PORT: FAILED (1 host): $src/data exists and differs from the source (--force replaces it)
$dead: FAILED (1 host): cannot connect to $dead: Connection refused
3 of 5 replicas complete: SUMMARY
WANT
sed -E 's/\(3 hosts, [0-9.]+ to [0-9.]+ s\)/(3 hosts, TIMES)/;
	s/complete: .*, over tcp$/complete: SUMMARY/' "$WORK/out" >"$WORK/got"
diff "$WORK/want" "$WORK/got" >/dev/null ||
	fail "default report: $(diff "$WORK/want" "$WORK/got")"
grep -qxF "rdmcp: failed: 127.0.0.[4,9]:$PORT" "$WORK/err" || fail "$(cat "$WORK/err")"
note "default: $(wc -l <"$WORK/out") lines for 5 hosts"

# -q: the failures' lines and the summary only
clear
echo other >"$(landed 3 "$src/data")"
expect_status 1 "$RDMCP" -q --retries 0 "$src/data" "$list"
[ "$(grep -c ": ok" "$WORK/out")" -eq 0 ] || fail "-q: $(cat "$WORK/out")"
[ "$(grep -c ": FAILED (1 host)" "$WORK/out")" -eq 2 ] || fail "-q: $(cat "$WORK/out")"
grep -q "^3 of 5 replicas complete" "$WORK/out" || fail "-q: $(cat "$WORK/out")"

# -v on success: what is sent and how, one line per host, the set-up time
clear
expect_status 0 "$RDMCP" -v -b 64K "$src/data" "$(hosts 4)"
grep -qx "rdmcp: sending 1 file (1 entries, 97.7 KiB) to 4 hosts: 2 blocks of 64.0 KiB, binomial schedule (chosen) of [0-9]* steps, transport auto" \
	"$WORK/err" || fail "-v: what is sent: $(cat "$WORK/err")"
grep -q "^rdmcp: set-up (resolve, connect, authenticate, prepare) took [0-9.]* s of [0-9.]* s$" \
	"$WORK/err" || fail "-v: set-up: $(cat "$WORK/err")"
[ "$(host_lines ok "$WORK/out")" -eq 4 ] || fail "-v: $(cat "$WORK/out")"
grep -q "^127.0.0.\[2-5\]:$PORT: ok (4 hosts" "$WORK/out" || fail "-v: $(cat "$WORK/out")"
grep -q "over tcp$" "$WORK/out" || fail "-v: the transport used: $(cat "$WORK/out")"
! grep -q "(127.0.0" "$WORK/out" || fail "-v shows -vv's addresses: $(cat "$WORK/out")"
note "-v: $(grep "^rdmcp: sending" "$WORK/err")"

# -vv: each host's address and rank too
clear
expect_status 0 "$RDMCP" -vv -a chain "$src/data" "$(hosts 4)"
for i in 1 2 3 4; do
	grep -Eq "^$(host_addr "$i"):$PORT +ok +[0-9.]+ s .*\($(host_addr "$i"):$PORT, rank $i\)$" \
		"$WORK/out" || fail "-vv: host $i: $(cat "$WORK/out")"
done
grep -q "chain schedule of" "$WORK/err" || fail "-vv: -a chain: $(cat "$WORK/err")"

# The block size chosen for hosts on this machine, where members share the
# CPUs: the largest, where a network would get smaller ones (--plan); -v
# says the push's own
make_file "$src/big" $((4 << 20))
expect_status 0 "$RDMCP" --plan --hosts 5 --size $((4 << 20))
grep -q "^# block size 65536 .*(chosen), chain (chosen)$" "$WORK/out" ||
	fail "--plan: the network's block size: $(head -1 "$WORK/out")"
expect_status 0 "$RDMCP" -v --dry-run --json "$src/big" "$(hosts 4)"
grep -q "4 blocks of 1.0 MiB (chosen), binomial schedule (chosen)" \
	"$WORK/err" || fail "-v: loopback block size: $(cat "$WORK/err")"
grep -q '"dry_run":{"would":4,"block_size":1048576,' "$WORK/out" ||
	fail "the push's loopback block size: $(tail -1 "$WORK/out")"
