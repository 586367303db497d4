# SPDX-License-Identifier: MIT
# Receivers without a daemon, on loopback: 'rdmcp --serve --once' reports
# its port, takes its key on standard input, ends after one complete
# transfer, at the end of its standard input, or when no sender comes;
# and --rsh, with a local stand-in for ssh, starts them on every host
# (--fanout at a time), pushes, reports the hosts whose receiver did not
# start, and leaves no process behind, even when the sender is killed.
. "$(dirname "$0")/../lib.sh"
src=$WORK/src
mkdir -p "$src"
make_file "$src/data" 3000000
KEY=$(cat "$WORK/key")

# the stand-in for ssh: drops the host and runs the command line through
# a shell, as sshd does; records its arguments and the key it passes on
cat >"$WORK/fake-rsh" <<EOF
#!/bin/sh
host=\$1
shift
printf '%s\n' "\$*" >>"$WORK/rsh-args"
exec sh -c "\$*"
EOF
chmod +x "$WORK/fake-rsh"

# once_pids: the one-shot receivers of this test still running
once_pids() {
	pgrep -f -- "--serve --once.*$WORK" || true
}

# wait_gone SECS: until no one-shot receiver of this test runs
wait_gone() {
	local t
	for t in $(seq 1 $(($1 * 20))); do
		[ -z "$(once_pids)" ] && return 0
		sleep 0.05
	done
	fail "receivers left after $1 s: $(once_pids | xargs -r ps -o pid,args -p)"
}

# start_once NAME [options]: a receiver whose stdin is the fifo
# $WORK/NAME.in (held open on fd 7), stdout $WORK/NAME.out; waits for its
# port line and sets ONCE_PID and ONCE_PORT.
start_once() {
	local name=$1
	shift
	mkdir -p "$WORK/$name"
	mkfifo "$WORK/$name.in"
	exec 7<>"$WORK/$name.in"
	"$RDMCP" --serve --once --key - --prefix "$WORK/$name" "$@" \
		<"$WORK/$name.in" >"$WORK/$name.out" 2>"$WORK/$name.log" 7>&- &
	ONCE_PID=$!
	echo "$KEY" >&7
	wait_event "^RDMCP-PORT [0-9]*$" "$WORK/$name.out" 5 "$name: the port line"
	ONCE_PORT=$(sed -n 's/^RDMCP-PORT \([0-9]*\)$/\1/p' "$WORK/$name.out")
	[ -n "$ONCE_PORT" ] || fail "$name: no port line: $(cat "$WORK/$name.out" "$WORK/$name.log")"
}

# wait_exit PID SECS: its exit status into RC, failing if it runs longer
wait_exit() {
	local t
	for t in $(seq 1 $(($2 * 20))); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$1" 2>/dev/null && fail "pid $1 still running after $2 s"
	RC=0
	wait "$1" || RC=$?
}

# 1. one complete transfer, then exit 0; the port is the one it listens on
mkdir -p "$WORK/a$src"
start_once a
expect_status 0 "$RDMCP" "$src/data" "127.0.0.1:$ONCE_PORT"
cmp -s "$src/data" "$WORK/a$src/data" || fail "no copy"
wait_exit "$ONCE_PID" 5
[ "$RC" = 0 ] || fail "once: status $RC after a transfer"
exec 7>&-
note "one transfer, then exit 0"

# 2. standard input closed before any sender: exits (1: nothing landed)
start_once b
start=$(date +%s%N)
exec 7>&-
wait_exit "$ONCE_PID" 5
[ "$RC" = 1 ] || fail "stdin EOF: status $RC: $(cat "$WORK/b.log")"
note "stdin closed: exited after $(( ($(date +%s%N) - start) / 1000000 )) ms"
grep -q "standard input closed" "$WORK/b.log" || fail "$(cat "$WORK/b.log")"

# 3. no sender within -t: exits 1
start_once c -t 1
wait_exit "$ONCE_PID" 5
[ "$RC" = 1 ] || fail "idle: status $RC"
grep -q "no transfer came within 1.0 s" "$WORK/c.log" || fail "$(cat "$WORK/c.log")"
exec 7>&-

# 4. a bad key on stdin: the receiver does not start (4)
mkdir -p "$WORK/d"
echo nokey | "$RDMCP" --serve --once --key - --prefix "$WORK/d" \
	>"$WORK/d.out" 2>"$WORK/d.log" && fail "bad key accepted"
grep -q "does not start with a key" "$WORK/d.log" || fail "$(cat "$WORK/d.log")"
[ ! -s "$WORK/d.out" ] || fail "a port line without a key"

# 5. --rsh to 5 hosts, 2 at a time: every host gets its copy
hosts5=127.0.0.[2-6]
for i in 2 3 4 5 6; do mkdir -p "$WORK/h127.0.0.$i$src"; done
rsh=("$RDMCP" -v --rsh "$WORK/fake-rsh" --fanout 2 --remote-path "$RDMCP"
	--remote-opts "--prefix '$WORK/h%h' --listen %h:0")
expect_status 0 "${rsh[@]}" "$src/data" "$hosts5"
for i in 2 3 4 5 6; do
	cmp -s "$src/data" "$WORK/h127.0.0.$i$src/data" || fail "host $i: no copy"
	grep -q "^127.0.0.$i  *ok" "$WORK/out" || fail "$(cat "$WORK/out")"
done
grep "receivers started" "$WORK/err" | sed 's/^rdmcp: /  once: /'
[ "$(wc -l <"$WORK/rsh-args")" -eq 5 ] || fail "$(cat "$WORK/rsh-args")"
grep -Eq "[0-9a-f]{64}" "$WORK/rsh-args" && fail "a key on a command line"
grep -q -- "--key - " "$WORK/rsh-args" || fail "$(cat "$WORK/rsh-args")"
wait_gone 5

# 5b. a tree, into a directory made on the way (-d DIR/), with no --root
# given: the receiver may write only where the tree lands
mkdir -p "$src/tree/sub" && make_file "$src/tree/sub/f" 1000
ln -s sub/f "$src/tree/link"
expect_status 0 "$RDMCP" --rsh "$WORK/fake-rsh" --remote-path "$RDMCP" \
	--remote-opts "--listen %h:0" -r -d "$WORK/rtarget/" "$src/tree" \
	127.0.0.2
diff -r --no-dereference "$src/tree" "$WORK/rtarget/tree" >/dev/null ||
	fail "--rsh -r: the tree did not land"
tail -1 "$WORK/rsh-args" | grep -q -- "--root '\?$WORK'\? " ||
	fail "roots: $(tail -1 "$WORK/rsh-args")"
wait_gone 5

# 6. a host whose receiver cannot start (no such prefix): FAILED with the
# remote's message, the others complete, exit 1, --failed-file names it
rm -rf "$WORK/h127.0.0.4"
rm -f "$WORK"/h*"$src"/data
expect_status 1 "${rsh[@]}" --failed-file "$WORK/failed" "$src/data" "$hosts5"
grep -q "^127.0.0.4  *FAILED.*prefix $WORK/h127.0.0.4: No such file" \
	"$WORK/out" || fail "$(cat "$WORK/out")"
[ "$(host_lines ok "$WORK/out")" -eq 4 ] || fail "$(cat "$WORK/out")"
[ "$(cat "$WORK/failed")" = 127.0.0.4 ] || fail "failed file: $(cat "$WORK/failed")"
wait_gone 5
mkdir -p "$WORK/h127.0.0.4$src"

# 7. a remote command that never reports: FAILED after --connect-timeout,
# and killed
printf '#!/bin/sh\necho starting >&2\nexec sleep 61.2345\n' >"$WORK/silent"
chmod +x "$WORK/silent"
start=$(date +%s%N)
expect_status 1 "$RDMCP" -v --rsh "$WORK/fake-rsh" --remote-path "$WORK/silent" \
	--connect-timeout 0.5 "$src/data" 127.0.0.2
ms=$(( ($(date +%s%N) - start) / 1000000 ))
grep -q "^127.0.0.2  *FAILED.*no port reported within --connect-timeout: starting" \
	"$WORK/out" || fail "$(cat "$WORK/out")"
[ "$ms" -lt 3000 ] || fail "silent receiver: took $ms ms"
! pgrep -f "sleep 61.2345" >/dev/null || fail "the silent command was left"

# 8. hosts with a port and a bad --rsh are usage errors
expect_status 2 "$RDMCP" --rsh "$WORK/fake-rsh" "$src/data" 127.0.0.2:7000
expect_status 2 "$RDMCP" --rsh "'unterminated" "$src/data" 127.0.0.2
# RDMCP_RSH is the default, and an empty --rsh means daemons
RDMCP_RSH="$WORK/fake-rsh" expect_status 1 "$RDMCP" --remote-path /nonexistent \
	"$src/data" 127.0.0.2
grep -q "FAILED.*/nonexistent" "$WORK/out" || fail "$(cat "$WORK/out")"
RDMCP_RSH="$WORK/fake-rsh" expect_status 1 "$RDMCP" --rsh "" --connect-timeout 1 \
	"$src/data" "127.0.0.2:$PORT"
grep -q "FAILED.*refused" "$WORK/out" || fail "$(cat "$WORK/out")"

# 9. the sender killed mid-transfer: its receivers end, temporaries go.
# --bwlimit keeps it under way for 15 s whatever the machine's speed (on
# a fast one the whole 300 MiB could land before a block was seen)
rm -f "$WORK"/h*"$src"/data
make_file "$src/big" $((300 << 20))
"${rsh[@]}" -a chain -b 64K --bwlimit 20M "$src/big" "$hosts5" >"$WORK/out" 2>"$WORK/err" &
pid=$!
wait_event "receivers started" "$WORK/err" 4 "the start of the receivers"
wait_blocks "$WORK/h127.0.0.2" 10	# mid-transfer
[ -n "$(once_pids)" ] || fail "no receiver running: $(cat "$WORK/err")"
kill -TERM "$pid"
start=$(date +%s%N)
wait_exit "$pid" 10
[ "$RC" -eq 143 ] || fail "killed sender: status $RC"
wait_gone 5
note "sender killed: receivers gone $(( ($(date +%s%N) - start) / 1000000 )) ms later"
assert_no_temporaries
for i in 2 3 4 5 6; do
	# only a host reported complete may hold the file
	grep -q "^127.0.0.$i  *ok" "$WORK/out" ||
		[ ! -e "$WORK/h127.0.0.$i$src/big" ] || fail "host $i: a final file"
done
