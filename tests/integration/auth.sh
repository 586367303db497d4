# SPDX-License-Identifier: MIT
# Authentication: a daemon serves only senders holding its key, and
# refuses everything else before it creates any file or directory; keys
# are created 0600 and never overwritten; careless keys are refused.
. "$(dirname "$0")/../lib.sh"
start_daemons 2 -t 1
src=$WORK/src
mkdir -p "$src"
prepare_dirs 2 "$src"
make_file "$src/data" 100000
RAW=$TOP/build/tests/rawclient
nothing_landed() {
	local left
	left=$(find "$WORK/h1" "$WORK/h2" -mindepth 1 -newer "$WORK/mark" | head -3)
	[ -z "$left" ] || fail "$1: created $left"
}
# the right key works
expect_status 0 "$RDMCP" "$src/data" "$(hosts 2)"
assert_copies 2 "$src/data"
rm -f "$WORK"/h*"$src"/data
touch "$WORK/mark"
sleep 0.01
# a sender with another key: refused, named, nothing created
"$RDMCP" -q --genkey "$WORK/other"
[ "$(stat -c %a "$WORK/other")" = 600 ] || fail "key mode $(stat -c %a "$WORK/other")"
RDMCP_KEY=$WORK/other expect_status 1 "$RDMCP" -v "$src/data" "$(hosts 2)"
for i in 1 2; do
	# the sender names the key file and the likely cause
	grep -q "^$(host_addr "$i"):$PORT *FAILED.*authentication failed with the daemon at $(host_addr "$i"):$PORT: the key in $WORK/other is not the one it holds (check that both are the cluster's key)" \
		"$WORK/out" || fail "sender, host $i: $(cat "$WORK/out")"
	# and each daemon logs who failed, and why
	wait_event "warning: authentication failed with the sender at 127\.0\.0\.1:[0-9]*: it left after our challenge: its key is not the one this daemon holds" \
		"$WORK/daemon$i.log" 5 "daemon $i logging the failed authentication"
done
nothing_landed "wrong key"
# --key takes precedence over RDMCP_KEY
expect_status 1 "$RDMCP" --key "$WORK/other" "$src/data" "$(hosts 1)"
grep -q "authentication failed" "$WORK/out" || fail "$(cat "$WORK/out")"
# a forged proof is refused by the daemon itself as soon as it comes,
# before any request (issue 40, item 2: it waited for the JOB, with 64 MiB
# allowed, before it checked the proof)
out=$("$RAW" "$(host_addr 1)" "$PORT" badproof)
[ "$out" = "refused: authentication failed: the sender does not hold this daemon's key" ] ||
	fail "bad proof: $out"
# ... so 16 such clients, each with a 64 MiB JOB behind its forged proof,
# cost the daemon next to no memory (it took 1 GiB)
hwm() {	# the daemon's peak resident memory, KiB
	awk '/^VmHWM/ { print $2 }' "/proc/${DAEMON_PIDS[1]}/status"
}
before=$(hwm)
clients=()
for i in $(seq 1 16); do
	"$RAW" "$(host_addr 1)" "$PORT" bigbody >"$WORK/big$i" &
	clients+=($!)
done
wait "${clients[@]}"
for i in $(seq 1 16); do
	case $(cat "$WORK/big$i") in
	"refused: authentication failed"* | dropped) ;;
	*) fail "a forged proof with a big body: $(cat "$WORK/big$i")" ;;
	esac
done
after=$(hwm)
note "16 forged proofs with 64 MiB jobs: the daemon's peak memory from $((before / 1024)) to $((after / 1024)) MiB"
[ $((after - before)) -lt $((128 << 10)) ] ||
	fail "the daemon's peak memory grew by $(((after - before) / 1024)) MiB before anyone authenticated"
# a tampered job is refused by the daemon itself
out=$("$RAW" "$(host_addr 1)" "$PORT" tamper "$WORK/key")
case $out in "refused: authentication failed"*) ;; *) fail "tamper: $out" ;; esac
out=$("$RAW" "$(host_addr 1)" "$PORT" nojob)
[ "$out" = dropped ] || fail "unauthenticated job: $out"
grep -q "authentication failed with the sender at 127\.0\.0\.1:[0-9]*: its proof does not match this daemon's key" \
	"$WORK/daemon1.log" || fail "bad proof not logged: $(tail -5 "$WORK/daemon1.log")"
nothing_landed "hostile clients"
# a client that sends nothing is dropped after the daemon's timeout (1 s)
out=$("$RAW" "$(host_addr 1)" "$PORT" idle | tr '\n' ' ')
case $out in "dropped after "*) ;; *) fail "idle: $out" ;; esac
ms=${out#dropped after }
ms=${ms%% *}
note "an idle connection was dropped after $ms ms (timeout 1 s)"
[ "$ms" -lt 5000 ] || fail "idle connection kept $ms ms"
# the daemons still serve
expect_status 0 "$RDMCP" "$src/data" "$(hosts 2)"
# a missing key: the sender says how to make one (exit 3)
RDMCP_KEY=$WORK/none expect_status 3 "$RDMCP" "$src/data" "$(hosts 1)"
grep -q "rdmcp --genkey" "$WORK/err" || fail "$(cat "$WORK/err")"
# --genkey never replaces a key
expect_status 3 "$RDMCP" --genkey "$WORK/other"
grep -q "File exists" "$WORK/err" || fail "$(cat "$WORK/err")"
# a key others may read: neither side uses it
chmod 644 "$WORK/other"
RDMCP_KEY=$WORK/other expect_status 3 "$RDMCP" "$src/data" "$(hosts 1)"
grep -q "chmod 600" "$WORK/err" || fail "$(cat "$WORK/err")"
RDMCP_KEY=$WORK/other expect_status 4 "$RDMCP" --serve --listen \
	"$(host_addr 3):$PORT" --prefix "$WORK/h1"
grep -q "accessible to other users" "$WORK/err" || fail "$(cat "$WORK/err")"
printf 'not a key\n' >"$WORK/junk"
chmod 600 "$WORK/junk"
RDMCP_KEY=$WORK/junk expect_status 3 "$RDMCP" "$src/data" "$(hosts 1)"
grep -q "not a key" "$WORK/err" || fail "$(cat "$WORK/err")"
