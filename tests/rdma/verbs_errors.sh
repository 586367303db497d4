# SPDX-License-Identifier: MIT
# The classic RDMA failures get clear, actionable errors: a locked-memory
# limit too low to register (on the sender and on a receiver; a receiver
# whose limit holds its bounce buffers but not all of its destination
# lands the blocks that do not fit through them), a device
# that does not serve the address, an address on no RDMA device; and
# --transport auto picks verbs here, tcp when told.
. "$(dirname "$0")/rlib.bash"
need_rxe 4
src=$WORK/src
mkdir -p "$src"
make_file "$src/data" $((4 << 20))
# a command prefix: no CAP_IPC_LOCK (which lifts the locked-memory limit)
nocap=(setpriv --bounding-set=-ipc_lock --inh-caps=-ipc_lock --)
# limit_daemon2 BYTES: host 2's daemon again, without CAP_IPC_LOCK and
# under a locked-memory limit of BYTES
limit_daemon2() {
	DAEMON_WRAP=(prlimit --memlock="$1" "${nocap[@]}")
	restart_daemon 2 --transport verbs
	DAEMON_WRAP=()
}
# without CAP_IPC_LOCK and a 1 MiB limit, neither side can register
start_daemons 2 --transport verbs
prepare_dirs 2 "$src"
expect_status 3 prlimit --memlock=$((1 << 20)) "${nocap[@]}" \
	"$RDMCP" "${SENDER[@]}" --transport verbs "$src/data" "$(hosts 2)"
grep -q "locked-memory limit (ulimit -l, RLIMIT_MEMLOCK) is 1.0 MiB; raise it" \
	"$WORK/err" || fail "sender memlock: $(cat "$WORK/err")"
note "sender: $(head -1 "$WORK/err" | cut -c1-150)"
limit_daemon2 $((1 << 20))
expect_status 1 push --transport verbs "$src/data" "$(hosts 2)"
grep -q "$(host_addr 2):$PORT *FAILED.*locked-memory limit" "$WORK/out" ||
	fail "receiver memlock: $(cat "$WORK/out")"
note "receiver: $(grep FAILED "$WORK/out" | cut -c1-150)"
# a limit that holds the receiver's bounce buffers (64 KiB blocks) but not
# the 4 MiB destination: the blocks come through the buffers, with a copy
limit_daemon2 $((3 << 20))
expect_status 0 push --transport verbs -b 64K "$src/data" "$(hosts 2)"
assert_copies 2 "$src/data"
grep -q "locked-memory limit.*: blocks land in bounce buffers" \
	"$WORK/daemon2.log" || fail "fallback: $(daemon_log_tail 2)"
grep -q "0 bytes received in place, 4194304 copied from bounce buffers" \
	"$WORK/daemon2.log" || fail "fallback counts: $(daemon_log_tail 2)"
note "receiver under a 3 MiB limit: $(grep -h "copied from bounce" "$WORK/daemon2.log" | tail -1 | sed 's/.*job [^:]*: //')"
# a 12 MiB limit holds the first 8 MiB of a 20 MiB destination (the
# transport registers it 8 MiB at a time, as receives reach it): those
# blocks land in place, the rest through the bounce buffers
make_file "$src/mixed" $((20 << 20))
limit_daemon2 $((12 << 20))
expect_status 0 push --transport verbs -b 64K "$src/mixed" "$(hosts 2)"
assert_copies 2 "$src/mixed"
grep -q "8388608 bytes received in place, 12582912 copied from bounce buffers" \
	"$WORK/daemon2.log" || fail "partly in place: $(daemon_log_tail 2)"
# the wrong device for the address
restart_daemon 2 --transport verbs --device rxe3
expect_status 1 push --transport verbs "$src/data" "$(host_addr 2):$PORT"
grep -q "is served by rxe2, not by rxe3 (--device)" "$WORK/out" ||
	fail "device: $(cat "$WORK/out")"
# an address no RDMA device serves
"$RDMCP" --serve --listen "127.0.0.9:$PORT" --root "$WORK" \
	2>>"$WORK/daemon9.log" &
DAEMON_PIDS[9]=$!
wait_listening 127.0.0.9 || fail "the daemon on 127.0.0.9 did not start"
expect_status 1 "$RDMCP" --transport verbs -d "$WORK" "$src/data" \
	"127.0.0.9:$PORT"
grep -q "no RDMA device serves 127.0.0.9" "$WORK/out" ||
	fail "no device: $(cat "$WORK/out")"
# auto: tcp as soon as one member cannot do verbs (host 2's daemon still
# insists on the wrong device), verbs where everyone can, tcp when asked
# (each push onto empty hosts: identical copies are not sent again)
rm -f "$WORK"/h*"$src"/data
expect_status 0 push "$src/data" "$(hosts 2)"
grep -q "over tcp" "$WORK/out" || fail "auto, one without: $(cat "$WORK/out")"
restart_daemon 2
rm -f "$WORK"/h*"$src"/data
expect_status 0 push "$src/data" "$(hosts 2)"
grep -q "over verbs" "$WORK/out" || fail "auto: $(cat "$WORK/out")"
rm -f "$WORK"/h*"$src"/data
expect_status 0 push --transport tcp "$src/data" "$(hosts 2)"
grep -q "over tcp" "$WORK/out" || fail "tcp: $(cat "$WORK/out")"
