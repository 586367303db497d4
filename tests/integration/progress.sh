# SPDX-License-Identifier: MIT
# Progress for logs and terminals, and interrupted pushes: --progress into
# a file writes plain lines (no carriage return, no terminal escape), the
# first at once and then at most one every 5 s; on a terminal the line is
# redrawn in place and erased; -q wins over --progress; SIGTERM and
# SIGINT end the line, say "interrupted" and kill rdmcp with the signal
# (status 143, 130), and the hosts discard what they received.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
# many small blocks, one at a time: a push that lasts long enough to be
# stopped before it ends
make_file "$src/big" $((40 << 20))
SLOW=(--window 1 -b 4K)
# expanded here: a background job that expands it itself is this shell
# until it starts rdmcp, and a signal for rdmcp would end the test
HOSTS=$(hosts 3)
clear() { rm -f "$WORK"/h*"$src"/big; }

# no_control FILE: not a carriage return nor an escape in FILE
no_control() {
	! grep -q "$(printf '[\r\033]')" "$1" ||
		fail "control characters in $1: $(cat -v "$1" | head -5)"
}

# 1. a log: the first line at once; the sender stopped for 6 s, so that
# a second line is due when it resumes, and no more than one per 5 s
"$RDMCP" --progress "${SLOW[@]}" "$src/big" "$HOSTS" \
	>"$WORK/pout" 2>"$WORK/perr" &
pid=$!
start=$(date +%s%N)
wait_event "^rdmcp: progress: " "$WORK/perr" 20 "the first progress line"
kill -STOP "$pid"
sleep 6
kill -CONT "$pid"
rc=0
wait "$pid" || rc=$?
secs=$(( ($(date +%s%N) - start) / 1000000000 ))
[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$WORK/pout" "$WORK/perr")"
lines=$(grep -c "^rdmcp: progress: " "$WORK/perr" || true)
note "$lines progress lines in $secs s: $(head -1 "$WORK/perr")"
grep -q "^rdmcp: progress: .* of 40.0 MiB ([0-9]*%), .*/s, ETA [-0-9:]*, [0-9]/3 hosts done$" \
	"$WORK/perr" || fail "progress line: $(cat "$WORK/perr")"
[ "$lines" -ge 2 ] || fail "no progress line after the pause: $(cat "$WORK/perr")"
[ "$lines" -le $((1 + secs / 5)) ] ||
	fail "$lines progress lines in $secs s, more than one per 5 s"
no_control "$WORK/perr"
assert_copies 3 "$src/big"

# 2. -q wins over --progress; without --progress and a terminal, none
clear
expect_status 0 "$RDMCP" -q --progress -b 256K "$src/big" "$(hosts 3)"
[ ! -s "$WORK/err" ] || fail "-q --progress: $(cat -v "$WORK/err")"
clear
expect_status 0 "$RDMCP" -b 256K "$src/big" "$(hosts 3)"
[ ! -s "$WORK/err" ] || fail "stderr: $(cat -v "$WORK/err")"

# 3. on a terminal (script(1) gives rdmcp one): redrawn in place, and
# erased at the end
clear
script -qec "'$RDMCP' -b 256K '$src/big' '$(hosts 3)'" /dev/null \
	>"$WORK/tty" 2>&1 </dev/null || fail "on a terminal: $(cat -v "$WORK/tty")"
grep -q "$(printf '\r\033')\[K.* of 40.0 MiB (.*%)  .*  ETA .*  [0-9]/3 hosts done" \
	"$WORK/tty" || fail "no redrawn line: $(cat -v "$WORK/tty" | head -5)"
grep -q "$(printf '\r\033')\[K127.0.0.\[2-4\]:$PORT: ok (3 hosts" "$WORK/tty" ||
	fail "not erased before the report: $(cat -v "$WORK/tty" | tail -5)"

# interrupted SIG STATUS: interrupt a push with SIG once it has shown
# progress; it dies of the signal (STATUS), its last line says so, and no
# host keeps the file or a temporary
interrupted() {
	local sig=$1 want=$2 t rc=0
	clear
	rm -f "$WORK/perr"
	env --default-signal=INT "$RDMCP" --progress "${SLOW[@]}" "$src/big" \
		"$HOSTS" >"$WORK/pout" 2>"$WORK/perr" &
	pid=$!
	wait_event "^rdmcp: progress: " "$WORK/perr" 20 "progress before SIG$sig"
	kill "-$sig" "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq "$want" ] || fail "SIG$sig: exit $rc, want $want: $(cat "$WORK/perr")"
	[ "$(tail -n 1 "$WORK/perr")" = "rdmcp: interrupted (SIG$sig); hosts without a complete copy discard what they received" ] ||
		fail "SIG$sig: $(tail -n 2 "$WORK/perr" | cat -v)"
	[ "$(tail -c 1 "$WORK/perr" | od -An -c | tr -d ' ')" = '\n' ] ||
		fail "SIG$sig: no final newline"
	no_control "$WORK/perr"
	for t in $(seq 1 100); do
		[ -z "$(find "$WORK"/h* -name '.*.rdmcp-*' 2>/dev/null)" ] && break
		sleep 0.05
	done
	assert_no_temporaries
	for t in 1 2 3; do
		[ ! -e "$(landed "$t" "$src/big")" ] ||
			fail "SIG$sig: host $t kept a copy of an interrupted push"
	done
	note "SIG$sig: exit $rc, '$(tail -n 1 "$WORK/perr" | cut -c1-40)...'"
}
interrupted TERM 143
interrupted INT 130
