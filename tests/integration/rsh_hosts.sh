# SPDX-License-Identifier: MIT
# --rsh and hosts the remote shell could run or ssh could take as an
# option (security issue 40, item 6): a host with shell syntax or a
# leading '-', from the HOSTS argument, -w, -x, a host file or Slurm's
# node list, is a usage error (2) that names it, before any remote shell
# starts, and nothing runs; ssh gets the host after '--'; %h in
# --remote-opts reaches the remote shell quoted, written bare, in '...' or
# in "...", and the receivers land the files where it says.
. "$(dirname "$0")/../lib.sh"
src=$WORK/src
mkdir -p "$src"
make_file "$src/data" 100000

# Stand-ins for remote shells, as sshd would run them: in $WORK (sshd: in
# the home directory), record their arguments (one line, joined with '|'),
# skip options as getopt does (an -oProxyCommand=CMD option runs CMD, as
# ssh does), take the host and run the command line through a shell.
# bin/ssh is named ssh; fake-rsh is some other remote shell.
mkdir -p "$WORK/bin"
cat >"$WORK/bin/ssh" <<EOF
#!/bin/sh
cd "$WORK" || exit 255
(IFS='|'; printf '%s\n' "\$*") >>"$WORK/rsh-args"
while [ \$# -gt 0 ]; do
	case \$1 in
	--) shift; break ;;
	-oProxyCommand=*) sh -c "\${1#-oProxyCommand=}" ;;
	-*) ;;
	*) break ;;
	esac
	shift
done
shift
exec sh -c "\$*"
EOF
cp "$WORK/bin/ssh" "$WORK/fake-rsh"
chmod +x "$WORK/bin/ssh" "$WORK/fake-rsh"
# the remote rdmcp of the refused hosts, had they been taken
printf '#!/bin/sh\necho "remote ran: $*" >&2\nexit 1\n' >"$WORK/remote"
chmod +x "$WORK/remote"
RSH=(--rsh "$WORK/bin/ssh" --remote-path "$WORK/remote" --connect-timeout 5
	--remote-opts "--prefix $WORK/h%h")

# refused HOST ARGS...: rdmcp "${RSH[@]}" ARGS... (which give HOST) starts
# no remote shell, runs nothing (no $WORK/pwned), exits 2 and names HOST
refused() {
	local host=$1 rc=0
	shift
	rm -f "$WORK/rsh-args" "$WORK/pwned"
	timeout -k 5 60 "$RDMCP" "${RSH[@]}" "$@" >"$WORK/out" 2>"$WORK/err" ||
		rc=$?
	[ ! -e "$WORK/pwned" ] ||
		fail "host '$host' ran a command on the sender's behalf (exit $rc): $(cat "$WORK/err")"
	[ ! -e "$WORK/rsh-args" ] ||
		fail "host '$host' reached the remote shell: $(cat "$WORK/rsh-args")"
	[ "$rc" -eq 2 ] || fail "host '$host': exit $rc, not 2: $(cat "$WORK/err")"
	grep -qF "'$host' is not a host name or address" "$WORK/err" ||
		fail "host '$host': $(cat "$WORK/err")"
}

# --- 1. shell syntax in a host: refused, wherever it comes from ----------
# (the issue's examples, and more; no '/' in them, or they would be file
# names)
for h in 'h;touch${IFS}pwned' '$(touch${IFS}pwned)' '`touch${IFS}pwned`' \
	'a|touch${IFS}pwned' 'a&&touch${IFS}pwned' 'a>pwned' "a'b" 'a"b' \
	'a\b' 'a=b' 'user@host'; do
	refused "$h" "$src/data" "$h"
	refused "$h" "$src/data" "127.0.0.2,$h:7000"
	refused "$h" -w "$h" "$src/data"
done
refused 'a;b' "$src/data" "127.0.0.[2-3],a;b"
grep -q "at character 16:" "$WORK/err" || fail "no caret at the ';': $(cat "$WORK/err")"
printf '# a rack\n127.0.0.[2-3]\nx$(touch${IFS}pwned)y\n' >"$WORK/hosts"
refused 'x$(touch${IFS}pwned)y' -f "$WORK/hosts" "$src/data"
grep -q "hosts:3: " "$WORK/err" || fail "no line number: $(cat "$WORK/err")"
SLURM_JOB_NODELIST='n[1-2],n`touch${IFS}pwned`' \
	refused 'n`touch${IFS}pwned`' "$src/data"
refused 'a;b' -x 'a;b' "$src/data" 127.0.0.2
refused '::1;touch${IFS}pwned' "$src/data" '[::1;touch${IFS}pwned]'
refused '::1;touch${IFS}pwned' "$src/data" '::1;touch${IFS}pwned'

# --- 2. a host that ssh would take for an option: refused ---------------
# (with -w, or rdmcp would take it for one of its own)
for h in '-oProxyCommand=touch${IFS}pwned' '-oProxyCommand=touch' '-l' \
	'-x[1-2]'; do
	refused "${h/\[1-2\]/1}" -w "$h" "$src/data"
done
refused '.hidden' "$src/data" .hidden

# --- 3. legitimate hosts through ssh: '--', the host; %h quoted ---------
# (the receivers are real: the files must land where %h says)
for i in 2 3; do mkdir -p "$WORK/h127.0.0.$i$src"; done
rm -f "$WORK/rsh-args"
expect_status 0 "$RDMCP" --rsh "$WORK/bin/ssh -x" --remote-path "$RDMCP" \
	--remote-opts "--prefix $WORK/h%h --listen %h:0" "$src/data" \
	'127.0.0.[2-3]'
for i in 2 3; do
	cmp -s "$src/data" "$WORK/h127.0.0.$i$src/data" || fail "host $i: no copy"
	grep "^-x|--|127\.0\.0\.$i|$RDMCP --serve --once --key - " \
		"$WORK/rsh-args" |
		grep -qF -- " --prefix $WORK/h'127.0.0.$i' --listen '127.0.0.$i':0" ||
		fail "ssh's arguments for host $i: $(cat "$WORK/rsh-args")"
done
[ "$(wc -l <"$WORK/rsh-args")" -eq 2 ] || fail "$(cat "$WORK/rsh-args")"

# --- 4. another remote shell: the host first; %h in '...' and "..." -----
# lands where it says too; so does an IPv6 address
rm -f "$WORK/rsh-args"
mkdir -p "$WORK/q127.0.0.2$src"
expect_status 0 "$RDMCP" --rsh "$WORK/fake-rsh" --remote-path "$RDMCP" \
	--remote-opts "--prefix '$WORK/q%h' --listen \"%h\":0" "$src/data" \
	127.0.0.2
cmp -s "$src/data" "$WORK/q127.0.0.2$src/data" ||
	fail "%h in quotes: no copy in $WORK/q127.0.0.2: $(cat "$WORK/err")"
grep "^127\.0\.0\.2|$RDMCP --serve " "$WORK/rsh-args" |
	grep -qF -- " --prefix '$WORK/q127.0.0.2' --listen \"127.0.0.2\":0" ||
	fail "$(cat "$WORK/rsh-args")"
if grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null; then
	rm -f "$WORK/rsh-args"
	mkdir -p "$WORK/h::1$src"
	expect_status 0 "$RDMCP" --rsh "$WORK/bin/ssh" --remote-path "$RDMCP" \
		--remote-opts "--prefix $WORK/h%h --listen \"[%h]:0\"" \
		"$src/data" '[::1]'
	cmp -s "$src/data" "$WORK/h::1$src/data" || fail "[::1]: no copy"
	grep "^--|::1|" "$WORK/rsh-args" |
		grep -qF -- " --prefix $WORK/h'::1' --listen \"[::1]:0\"" ||
		fail "$(cat "$WORK/rsh-args")"
else
	note "no ::1 on lo: IPv6 not tried"
fi
# no receiver of this test outlives its push
for t in $(seq 1 100); do
	pgrep -f -- "--serve --once.*$WORK" >/dev/null || break
	sleep 0.05
done
! pgrep -f -- "--serve --once.*$WORK" >/dev/null ||
	fail "receivers left: $(pgrep -af -- "--serve --once.*$WORK")"
