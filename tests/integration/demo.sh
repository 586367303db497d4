# SPDX-License-Identifier: MIT
# make demo: daemons on the addresses and port asked for (RDMCP_DEMO_ADDRS,
# RDMCP_DEMO_PORT), one host and all of them side by side with their
# times, ratios and the sender's upload (about one copy for the pipeline,
# one per host one after another), every copy checked; nothing left
# running; bad settings refused.
. "$(dirname "$0")/../lib.sh"
addrs="127.0.0.2 127.0.0.3 127.0.0.4"
run_demo() {
	RDMCP_DEMO_ADDRS=$addrs RDMCP_DEMO_PORT=$PORT RDMCP_DEMO_MIB=4 \
		TMPDIR=$WORK expect_status "$1" "$TOP/scripts/demo.sh"
}
run_demo 0
out=$WORK/out
grep -q "^demo: starting 3 daemons: rdmcp --serve --listen ADDR:$PORT .*(ADDR: $addrs)" \
	"$out" || fail "daemons: $(cat "$out")"
grep -qx "127.0.0.\[2-4\]:$PORT: ok, verified (3 hosts, .*)" "$out" ||
	fail "no report of the push to all: $(cat "$out")"
grep -Eq "^demo:   1 host +[0-9.]+ s +1\.00 +1\.0[0-9] x the file$" "$out" ||
	fail "1-host row: $(cat "$out")"
# every host on this machine: the binomial pipeline (sched_auto_alg), as
# the push's dry run says
grep -Eq "^demo:   3 hosts, binomial pipeline \(chosen\) +[0-9.]+ s +[0-9.]+ +1\.[0-9]+ x the file$" \
	"$out" || fail "pipeline row (about one upload): $(cat "$out")"
grep -Eq "^demo:   3 hosts, one after another +[0-9.]+ s +[0-9.]+ +3\.0[0-9] x the file$" \
	"$out" || fail "sequential row (three uploads): $(cat "$out")"
grep -q "^demo: OK: cmp confirms all 7 copies are byte-identical" "$out" ||
	fail "$(cat "$out")"
sed -n 's/^demo:   /  demo: /p' "$out"
# it stopped its daemons and removed its scratch directory
for a in $addrs; do
	(exec 3<>"/dev/tcp/$a/$PORT") 2>/dev/null && fail "a daemon still listens on $a"
done
[ -z "$(ls -d "$WORK"/rdmcp-demo.* 2>/dev/null)" ] || fail "scratch directory left"
# settings it cannot use: said, status 1, nothing started
RDMCP_DEMO_PORT=http TMPDIR=$WORK expect_status 1 "$TOP/scripts/demo.sh"
grep -q "RDMCP_DEMO_PORT must be a port number, not 'http'" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
RDMCP_DEMO_ADDRS=127.0.0.2 TMPDIR=$WORK expect_status 1 "$TOP/scripts/demo.sh"
grep -q "RDMCP_DEMO_ADDRS needs at least 2 addresses" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
