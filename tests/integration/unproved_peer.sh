# SPDX-License-Identifier: MIT
# A sender believes nothing from an endpoint that has not proved it holds
# the key, and waits for that proof no longer than --connect-timeout
# (issue 40, items 3 and 4):
#   - an endpoint that answers AUTH with keepalives and never with a
#     CHALLENGE held a push past -t until it was killed: now its host
#     fails after --connect-timeout, keepalives or not;
#   - a proxy without the key that cut the control connection at the go
#     and answered the sender's question with OUTCOME=LANDED made it print
#     "ok" with nothing on that disk: now the host fails, and says why.
# And one that holds the key but sends a second CHALLENGE, without a body,
# after the handshake (found by make fuzz, fuzz_push): the sender drops
# the connection; it once computed a pointer past that body, NULL
# (undefined behaviour: clang's UBSan stops such a sender, e.g. make
# check-asan CC=clang; gcc's does not check it).
. "$(dirname "$0")/../lib.sh"
FAKE=$TOP/build/tests/fakepeer
src=$WORK/src
make_file "$src" 300000

# fakepeer MODE ADDR ARGS...: start it, wait until it listens
start_fake() {
	local log=$WORK/fake-$1.log
	"$FAKE" "$@" >"$log" &
	on_exit "kill -TERM -$! 2>/dev/null"
	wait_event '^listening' "$log" 5 "fakepeer $1 listening"
}

# 1. keepalives are no proof: given up after --connect-timeout (1 s),
# long before -t (60 s); the watchdog turns a hang into a failure
start_fake nop "$(host_addr 1)" "$PORT" 120
RDMCP_CMD_LIMIT=30 expect_status 1 "$RDMCP" -v --connect-timeout 1 -t 60 \
	--retries 0 "$src" "$(host_addr 1):$PORT"
grep -q "^$(host_addr 1):$PORT *FAILED .*did not prove it holds the key within 1000 ms (--connect-timeout)" \
	"$WORK/out" || fail "no deadline reason: $(cat "$WORK/out" "$WORK/err")"
grep -q '^auth' "$WORK/fake-nop.log" || fail "the sender never reached the fake"
note "$(grep FAILED "$WORK/out" | head -1)"

# 2. an OUTCOME from an endpoint that has not authenticated is not
# believed: the host fails, and holds nothing
start_daemon 2
wait_listening "$(host_addr 2)" || fail "daemon 2 did not start"
prepare_dirs 2 "$WORK/stage"
start_fake proxy "$(host_addr 3)" "$PORT" "$(host_addr 2)" "$PORT" 120
RDMCP_CMD_LIMIT=60 expect_status 1 "$RDMCP" -v --retries 0 -t 5 \
	-d "$WORK/stage/" "$src" "$(host_addr 3):$PORT"
grep -q '^cut at the go' "$WORK/fake-proxy.log" ||
	fail "the proxy never cut the go: $(cat "$WORK/fake-proxy.log" "$WORK/out" "$WORK/err")"
grep -q "^$(host_addr 3):$PORT *FAILED .*sent OUTCOME before it proved it holds the key: not believed" \
	"$WORK/out" || fail "report: $(cat "$WORK/out" "$WORK/err")"
note "$(grep FAILED "$WORK/out" | head -1)"
[ ! -e "$WORK/h2$WORK/stage/src" ] || fail "host 2 holds the file it was reported failed for"
[ "$(host_lines ok "$WORK/out")" -eq 0 ] || fail "a host reported ok: $(cat "$WORK/out")"

# 3. a second CHALLENGE, without a body, from an endpoint with the key:
# a protocol error that fails the host, nothing worse
start_fake rechallenge "$(host_addr 4)" "$PORT" "$RDMCP_KEY" 120
RDMCP_CMD_LIMIT=30 expect_status 1 "$RDMCP" -v --retries 0 -t 5 \
	"$src" "$(host_addr 4):$PORT"
grep -q '^rechallenged' "$WORK/fake-rechallenge.log" ||
	fail "the fake never sent its second CHALLENGE: $(cat "$WORK/out" "$WORK/err")"
grep -q "^$(host_addr 4):$PORT *FAILED .*Protocol error" "$WORK/out" ||
	fail "report: $(cat "$WORK/out" "$WORK/err")"
note "$(grep FAILED "$WORK/out" | head -1)"
