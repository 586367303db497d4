# SPDX-License-Identifier: MIT
# The command line: help, version, usage errors (2), sender-side errors (3),
# unreachable hosts reported quickly (1), --plan.
. "$(dirname "$0")/../lib.sh"
expect_status 0 "$RDMCP" --help
grep -q "^usage: rdmcp" "$WORK/out" || fail "--help"
expect_status 0 "$RDMCP" --version
grep -q "^rdmcp [0-9]" "$WORK/out" || fail "--version"
expect_status 2 "$RDMCP"
expect_status 2 "$RDMCP" /etc/hostname
expect_status 2 "$RDMCP" --bogus-option /etc/hostname 127.0.0.2
expect_status 2 "$RDMCP" -a fastest /etc/hostname 127.0.0.2
expect_status 2 "$RDMCP" -b 0 /etc/hostname 127.0.0.2
expect_status 2 "$RDMCP" -b 100T /etc/hostname 127.0.0.2
# a bad value names the valid range
expect_status 2 "$RDMCP" -t 0 /etc/hostname 127.0.0.2
grep -q "bad timeout '0' (seconds, from 0.001 to 86400)" "$WORK/err" ||
	fail "-t 0: $(cat "$WORK/err")"
expect_status 2 "$RDMCP" --connect-timeout -1 /etc/hostname 127.0.0.2
grep -q "from 0.001 to 86400" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 2 "$RDMCP" /etc/hostname ""
expect_status 2 "$RDMCP" /etc/hostname "a,,b"
expect_status 2 "$RDMCP" -d relative/dir /etc/hostname 127.0.0.2
grep -q "must be absolute" "$WORK/err" || fail "relative -d: $(cat "$WORK/err")"
# sender-side errors: nothing is contacted
expect_status 3 "$RDMCP" "$WORK/missing" "127.0.0.2:$PORT"
grep -q "cannot open .*missing" "$WORK/err" || fail "missing source"
# a directory without -r is a usage error (habits.sh)
expect_status 2 "$RDMCP" "$WORK" "127.0.0.2:$PORT"
grep -q "is a directory" "$WORK/err" || fail "directory source"
# nobody listens there: refused, reported at once
echo data >"$WORK/f"
start=$(date +%s)
expect_status 1 "$RDMCP" "$WORK/f" "127.0.0.2:$PORT,127.0.0.3:$PORT"
[ $(( $(date +%s) - start )) -lt 5 ] || fail "unreachable hosts took too long"
# one line for both, the hosts as one host list, as clush -b groups output
grep -qx "127.0.0.\[2-3\]:$PORT: FAILED (2 hosts): cannot connect to <address>: Connection refused" \
	"$WORK/out" || fail "not grouped: $(cat "$WORK/out")"
[ "$(grep -c FAILED "$WORK/out")" -eq 1 ] || fail "$(cat "$WORK/out")"
# with -v, one line per host too, as each outcome comes
expect_status 1 "$RDMCP" -v "$WORK/f" "127.0.0.2:$PORT,127.0.0.3:$PORT"
[ "$(host_lines FAILED "$WORK/out")" -eq 2 ] || fail "-v: $(cat "$WORK/out")"
grep -q "^127.0.0.3:$PORT  *FAILED .*cannot connect to 127.0.0.3:$PORT: Connection refused" \
	"$WORK/out" || fail "-v: $(cat "$WORK/out")"
expect_status 1 "$RDMCP" "$WORK/f" "no-such-host.invalid:$PORT"
grep -q "cannot resolve no-such-host.invalid" "$WORK/out" || fail "resolve"
# --plan: the schedule from outside
expect_status 0 "$RDMCP" --plan --hosts 13 --blocks 40 --algorithm binomial
tail -1 "$WORK/out" | grep -q "^# steps 43 " || fail "plan: $(tail -1 "$WORK/out")"
# each of 12 receivers gets each of 40 blocks once
[ "$(grep -vc '^#' "$WORK/out")" -eq $((12 * 40)) ] || fail "plan transfers"
[ "$(grep -v '^#' "$WORK/out" | awk '{print $3, $4}' | sort -u | wc -l)" -eq 480 ] ||
	fail "plan: a block reaches a host twice"
# chosen (--blocks K: K x 128 KiB): the chain from 16 KiB per host
# (k + n - 2 steps), below that the binomial pipeline (k + log2 n - 1)
expect_status 0 "$RDMCP" --plan --hosts 16 --blocks 100
tail -1 "$WORK/out" | grep -q "^# steps 114 " || fail "plan 16: $(tail -1 "$WORK/out")"
expect_status 0 "$RDMCP" --plan --hosts 64 --blocks 8
tail -1 "$WORK/out" | grep -q "^# steps 70 " || fail "plan 64, 8 blocks: $(tail -1 "$WORK/out")"
expect_status 0 "$RDMCP" --plan --hosts 64 --blocks 7
tail -1 "$WORK/out" | grep -q "^# steps 12 " || fail "plan 64, 7 blocks: $(tail -1 "$WORK/out")"
expect_status 0 "$RDMCP" --plan --hosts 5 --blocks 3 -a sequential
tail -1 "$WORK/out" | grep -q "^# steps 12 " || fail "plan sequential"
expect_status 2 "$RDMCP" --plan --blocks 3
# the daemon: no root, port in use
expect_status 2 "$RDMCP" --serve --listen "127.0.0.2:$PORT"
grep -q "root" "$WORK/err" || fail "no root: $(cat "$WORK/err")"
start_daemons 1
expect_status 4 "$RDMCP" --serve --listen "127.0.0.2:$PORT" --root "$WORK"
grep -qi "address already in use" "$WORK/err" || fail "port in use: $(cat "$WORK/err")"
# option defaults from the environment: a bad one names its variable
RDMCP_BLOCK_SIZE=0 expect_status 2 "$RDMCP" /etc/hostname 127.0.0.2
grep -q "bad block size '0' .*from RDMCP_BLOCK_SIZE" "$WORK/err" ||
	fail "env: $(cat "$WORK/err")"
RDMCP_VERIFY=maybe expect_status 2 "$RDMCP" /etc/hostname 127.0.0.2
grep -q "RDMCP_VERIFY must be 1 or 0" "$WORK/err" || fail "env: $(cat "$WORK/err")"
# a good one is a default that the command line overrides
chain=$("$RDMCP" --plan --hosts 4 --blocks 3 -a chain)
[ "$(RDMCP_ALGORITHM=chain "$RDMCP" --plan --hosts 4 --blocks 3)" = "$chain" ] ||
	fail "RDMCP_ALGORITHM ignored"
[ "$(RDMCP_ALGORITHM=tree "$RDMCP" --plan --hosts 4 --blocks 3 -a chain)" = "$chain" ] ||
	fail "the command line did not override RDMCP_ALGORITHM"
