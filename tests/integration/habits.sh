# SPDX-License-Identifier: MIT
# Small surprises for users of pdsh, pdcp and rsync: a directory without
# -r is a usage error (2); --bwlimit takes a fraction (1.5m); the
# daemon's log is stamped in ISO 8601 (seconds since the epoch with
# --log-time epoch); a mistyped long option gets "rdmcp:" and "did you
# mean"; --fanout without --rsh warns; a push that sent nothing gives no
# rate; --topology finds this machine's rack by its address, and takes
# hosts separated by blanks after 'RACK:'.
. "$(dirname "$0")/../lib.sh"
start_daemons 6
src=$WORK/src
mkdir -p "$src/tree"
prepare_dirs 6 "$src"
make_file "$src/data" 5000

# a directory without -r
expect_status 2 "$RDMCP" "$src/tree" "$(hosts 1)"
grep -q "is a directory (-r copies" "$WORK/err" || fail "$(cat "$WORK/err")"

# --bwlimit 1.5m: 1.5 MiB/s, a 1 MiB block in 666.667 ms
expect_status 0 "$RDMCP" -n -b 1M --bwlimit 1.5m "$src/data" "$(hosts 2)"
grep -q "2 steps x 666.667 ms (one block at .*, --bwlimit)" "$WORK/out" ||
	fail "--bwlimit 1.5m: $(cat "$WORK/out" "$WORK/err")"
expect_status 2 "$RDMCP" --bwlimit 1.5.1m "$src/data" "$(hosts 2)"

# the daemon's log: ISO 8601 local time with its offset; epoch on request
iso='^rdmcp: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}[+-][0-9]{2}:[0-9]{2} '
grep -qE "${iso}serving on $(host_addr 1):$PORT" "$WORK/daemon1.log" ||
	fail "no ISO 8601 stamp: $(head -3 "$WORK/daemon1.log")"
! grep -qvE "$iso" "$WORK/daemon1.log" ||
	fail "a line without its stamp: $(grep -vE "$iso" "$WORK/daemon1.log" | head -3)"
restart_daemon 2 --log-time epoch
wait_event "serving on" "$WORK/daemon2.log" 10 "host 2 restarting"
tail -n 3 "$WORK/daemon2.log" | grep -qE '^rdmcp: [0-9]{10}\.[0-9]{6} serving on' ||
	fail "--log-time epoch: $(tail -n 3 "$WORK/daemon2.log")"
expect_status 2 "$RDMCP" --serve --log-time local --root "$WORK"
grep -q "unknown --log-time 'local' (iso, epoch)" "$WORK/err" || fail "$(cat "$WORK/err")"

# getopt's errors as rdmcp says them, with what was meant
expect_status 2 "$RDMCP" --verfy "$src/data" "$(hosts 1)"
grep -qx "rdmcp: unknown option '--verfy'; did you mean --verify?" "$WORK/err" ||
	fail "--verfy: $(cat "$WORK/err")"
expect_status 2 "$RDMCP" --bwlmit=10M "$src/data" "$(hosts 1)"
grep -qx "rdmcp: unknown option '--bwlmit'; did you mean --bwlimit?" "$WORK/err" ||
	fail "--bwlmit: $(cat "$WORK/err")"
expect_status 2 "$RDMCP" --re "$src/data" "$(hosts 1)"
grep -qx "rdmcp: option '--re' is ambiguous; it begins --recursive --remote-opts --remote-path --retries" \
	"$WORK/err" || fail "--re: $(cat "$WORK/err")"
expect_status 2 "$RDMCP" --force=yes "$src/data" "$(hosts 1)"
grep -qx "rdmcp: option '--force' takes no value" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 2 "$RDMCP" "$src/data" "$(hosts 1)" -d
grep -qx "rdmcp: option '-d' needs a value" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 2 "$RDMCP" -rZ "$src/data" "$(hosts 1)"
grep -qx "rdmcp: unknown option '-Z'" "$WORK/err" || fail "$(cat "$WORK/err")"
! grep -q "^$RDMCP:" "$WORK/err" || fail "the binary's path: $(cat "$WORK/err")"

# --fanout is --rsh's: alone it warns, and the push goes on
expect_status 0 "$RDMCP" --fanout 8 "$src/data" "$(hosts 2)"
grep -q "warning: --fanout bounds the remote commands of --rsh" "$WORK/err" ||
	fail "--fanout: $(cat "$WORK/err")"

# sent again: every host has it, nothing is sent, and no rate is given
# (the words of untruths.sh, which the two branches wrote apart)
expect_status 0 "$RDMCP" "$src/data" "$(hosts 2)"
grep -qx "2 of 2 replicas complete: already identical, nothing sent" \
	"$WORK/out" || fail "nothing sent: $(cat "$WORK/out")"
expect_status 0 "$RDMCP" --json "$src/data" "$(hosts 2)"
tail -1 "$WORK/out" | jq -e '.sent == 0 and .throughput == 0' >/dev/null ||
	fail "JSON: $(tail -1 "$WORK/out")"

# --topology: this machine (127.0.0.1, on lo; with --bind, that address)
# is in rack A, listed second and with blanks: its rack goes first
rank_of() {
	sed -n 's/.*: rank \([0-9]*\) of .*/\1/p' "$WORK/daemon$1.log" | tail -1
}
cat >"$WORK/topo" <<EOF
B: $(host_addr 1) $(host_addr 2),$(host_addr 3)
A:  127.0.0.1	$(host_addr 4) $(host_addr 5) $(host_addr 6)
EOF
make_file "$src/racked" 70000
for bind in "" 127.0.0.1; do
	rm -f "$WORK"/h*"$src/racked"
	expect_status 0 "$RDMCP" -v ${bind:+--bind "$bind"} --topology "$WORK/topo" \
		"$src/racked" "$(hosts 6)"
	assert_copies 6 "$src/racked"
	order=""
	for i in 1 2 3 4 5 6; do
		order="$order $(rank_of "$i")"
	done
	[ "$order" = " 4 5 6 1 2 3" ] ||
		fail "--topology${bind:+ --bind $bind}: ranks$order of hosts 1-6, want 4 5 6 1 2 3 ($(cat "$WORK/err"))"
done
