# SPDX-License-Identifier: MIT
# pdsh's and clush's host syntax: -w ^FILE and -x ^FILE (host files),
# step ranges (node[1-30/4]), several hosts on a line of a host file;
# -x names a host with or without its port, may be repeated (every list
# left out) and warns when it names none;
# pdsh's -f N (its fanout) is answered with what rdmcp does instead.
. "$(dirname "$0")/../lib.sh"
start_daemons 5
P=$PORT
src=$WORK/src
mkdir -p "$src"
prepare_dirs 5 "$src"
make_file "$src/data" 5000
# got I...: exactly hosts I... hold the copy; then it is removed
got() {
	local i want
	for i in 1 2 3 4 5; do
		want=no
		case " $* " in *" $i "*) want=yes ;; esac
		if [ -e "$(landed "$i" "$src/data")" ]; then
			[ $want = yes ] || fail "host $i got a copy: $(cat "$WORK/out" "$WORK/err")"
			cmp -s "$src/data" "$(landed "$i" "$src/data")" || fail "host $i: other bytes"
		else
			[ $want = no ] || fail "host $i has no copy: $(cat "$WORK/out" "$WORK/err")"
		fi
	done
	rm -f "$WORK"/h*"$src/data"
}

# -w ^FILE, several hosts on one line; -x ^FILE, its entry without a port
printf '127.0.0.2:%s 127.0.0.3:%s\t127.0.0.4:%s # rack 1\n127.0.0.5:%s\n' \
	"$P" "$P" "$P" "$P" >"$WORK/hosts"
printf '# down\n127.0.0.3\n' >"$WORK/down"
expect_status 0 "$RDMCP" -w "^$WORK/hosts" -x "^$WORK/down" "$src/data"
got 1 3 4
grep -q "^3 of 3 replicas complete" "$WORK/out" || fail "$(cat "$WORK/out")"
# -x repeated, a ^FILE among them: every list is left out, and an entry
# that names no host is named in the warning
expect_status 0 "$RDMCP" -w "^$WORK/hosts" -x "^$WORK/down" -x 127.0.0.5 \
	-x 127.0.0.9 "$src/data"
got 1 3
grep -qF "rdmcp: warning: -x 127.0.0.9: no such host in the host list, not left out" \
	"$WORK/err" || fail "no warning: $(cat "$WORK/err")"
# the same file with -f
expect_status 0 "$RDMCP" -f "$WORK/hosts" "$src/data"
got 1 2 3 4
# a missing ^FILE says which
expect_status 2 "$RDMCP" -w "^$WORK/nohosts" "$src/data"
grep -q "cannot read host file '$WORK/nohosts'" "$WORK/err" || fail "$(cat "$WORK/err")"

# clush's steps
expect_status 0 "$RDMCP" "$src/data" "127.0.0.[2-6/2]:$P"
got 1 3 5
# -x with the port, against hosts given without one (-P); and without it
expect_status 0 "$RDMCP" -P "$P" -x "127.0.0.3:$P" "$src/data" "127.0.0.[2-4]"
got 1 3
expect_status 0 "$RDMCP" -x 127.0.0.4 "$src/data" "127.0.0.[2-5]:$P"
got 1 2 4
# -x that names no host of the list: copied to all, with a warning
expect_status 0 "$RDMCP" -x "127.0.0.9,127.0.0.2:1" "$src/data" "127.0.0.[2-3]:$P"
got 1 2
grep -qF "rdmcp: warning: -x 127.0.0.9,127.0.0.2:1: none of these is in the host list, not left out" \
	"$WORK/err" || fail "no warning: $(cat "$WORK/err")"

# pdsh's -f N: no such host file, and what rdmcp does instead
expect_status 2 "$RDMCP" -f 32 -w "127.0.0.2:$P" "$src/data"
grep -q "rdmcp: -f 32: no host file '32'.*there is no fanout to set" "$WORK/err" ||
	fail "-f 32: $(cat "$WORK/err")"
got
