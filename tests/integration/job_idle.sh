# SPDX-License-Identifier: MIT
# A sender that holds a daemon's job without making it progress cannot
# keep the job's slot and space for its own timeout (up to 24 h): after the
# daemon's --job-idle-timeout the job is dropped, the daemon's log says
# why, the sender gets a FAIL that names the option, the temporary is
# removed and the slot is free again (--max-jobs 1: a push goes through).
# Held are: a job that got keepalives and nothing else while waiting for
# START; a traced job, ended, whose sender never asks for its timeline nor
# closes; a running job whose sender froze (SIGSTOP) with a timeout of 10
# minutes.  A push slower than the limit, whose blocks keep coming
# (--bwlimit), is not dropped.
. "$(dirname "$0")/../lib.sh"
RAW=$TOP/build/tests/rawclient
CAP=4	# --job-idle-timeout, in seconds
start_daemons 1 --max-jobs 1 --job-idle-timeout "$CAP"
prepare_dirs 1 /rawclient
src=$WORK/src
mkdir -p "$src"
prepare_dirs 1 "$src"
make_file "$src/small" 100000

# push_small: a push that needs the daemon's one slot
push_small() {
	rm -f "$(landed 1 "$src/small")"
	expect_status 0 "$RDMCP" --retries 0 "$src/small" "$(hosts 1)"
	assert_copies 1 "$src/small"
}

# 1. accepted, then nothing but keepalives: the job, its temporary and its
# slot are held until the daemon drops it
"$RAW" "$(host_addr 1)" "$PORT" hold "$RDMCP_KEY" >"$WORK/hold.out" &
raw=$!
on_exit "daemon_running $raw && kill -KILL $raw"
wait_event "^accepted" "$WORK/hold.out" 10 "the held job's ACCEPT"
[ -n "$(find "$WORK/h1/rawclient" -name '.held.rdmcp-*')" ] ||
	fail "the held job has no temporary"
expect_status 1 "$RDMCP" --retries 0 "$src/small" "$(hosts 1)"
grep -q "busy" "$WORK/out" || fail "its slot was free: $(cat "$WORK/out")"
wait_exit "$raw" $((CAP + 16))
grep -q "^failed after [0-9]* ms: no progress for .*waited for START.*--job-idle-timeout ($CAP.0 s)" \
	"$WORK/hold.out" || fail "held job: $(cat "$WORK/hold.out")"
ms=$(sed -n 's/^failed after \([0-9]*\) ms.*/\1/p' "$WORK/hold.out")
[ "$ms" -ge $((CAP * 1000 - 100)) ] || fail "dropped after $ms ms, before --job-idle-timeout"
grep -q "job [0-9a-f]*: failed: no progress for [0-9.]* s: it had accepted and waited for START" \
	"$WORK/daemon1.log" || fail "not logged: $(tail -3 "$WORK/daemon1.log")"
[ -z "$(find "$WORK/h1/rawclient" -name '.held.rdmcp-*')" ] ||
	fail "the dropped job's temporary is left"
push_small
note "a job held with keepalives alone: dropped after $ms ms, its slot free"

# 2. a traced job ended by its sender, which then neither asks for the
# timeline nor closes: let go
"$RAW" "$(host_addr 1)" "$PORT" holdended "$RDMCP_KEY" >"$WORK/ended.out" &
raw=$!
on_exit "daemon_running $raw && kill -KILL $raw"
wait_event "^ended" "$WORK/ended.out" 10 "the held job's end"
wait_exit "$raw" $((CAP + 16))
grep -q "^dropped after [0-9]* ms" "$WORK/ended.out" ||
	fail "ended job: $(cat "$WORK/ended.out")"
grep -q "over, but its sender neither closed nor said anything for .*--job-idle-timeout" \
	"$WORK/daemon1.log" || fail "not logged: $(tail -3 "$WORK/daemon1.log")"
push_small

# 3. a running job whose sender froze (its own timeout, 10 min, would
# hold it that long): dropped, and the sender, thawed, says why
make_file "$src/big" $((30 << 20))
"$RDMCP" -v -t 600 --retries 0 --bwlimit 1M -b 64K "$src/big" "$(hosts 1)" \
	>"$WORK/frozen.out" 2>&1 &
sender=$!
on_exit "daemon_running $sender && kill -KILL $sender"
: >"$WORK/daemon1.log"
wait_event "rank 1 of 2" "$WORK/daemon1.log" 10 "the push's START"
wait_blocks "$WORK/h1$src" 10
kill -STOP "$sender"
wait_event "failed: no progress for [0-9.]* s: it ran, but no block came or went" \
	"$WORK/daemon1.log" $((CAP + 16)) "the frozen push's drop"
for t in $(seq 1 100); do
	[ -z "$(find "$WORK/h1$src" -name '.*.rdmcp-*')" ] && break
	sleep 0.05
done
[ -z "$(find "$WORK/h1$src" -name '.*.rdmcp-*')" ] ||
	fail "the frozen push's temporary is left"
push_small
kill -CONT "$sender"
wait_exit "$sender" 20
[ "$RC" -eq 1 ] || fail "the frozen sender exited $RC: $(cat "$WORK/frozen.out")"
grep -q "FAILED.*no progress for.*--job-idle-timeout" "$WORK/frozen.out" ||
	fail "the sender does not say why: $(cat "$WORK/frozen.out")"
[ ! -e "$(landed 1 "$src/big")" ] || fail "the dropped push landed"

# 4. slower than the limit, but its blocks keep coming: not dropped
make_file "$src/slow" $((CAP * 384 << 10))
: >"$WORK/daemon1.log"
expect_status 0 "$RDMCP" --retries 0 --bwlimit 256K -b 16K "$src/slow" "$(hosts 1)"
assert_copies 1 "$src/slow"
! grep -q "no progress" "$WORK/daemon1.log" || fail "a slow push was dropped"
assert_no_temporaries
