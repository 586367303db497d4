# SPDX-License-Identifier: MIT
# Host list expressions from the command line: ranges, host files, -x,
# duplicates, Slurm's node list, errors that point at the character, and
# compressed lists of the hosts that did and did not get a copy.
. "$(dirname "$0")/../lib.sh"
start_daemons 5
src=$WORK/src
mkdir -p "$src"
prepare_dirs 6 "$src"
make_file "$src/data" 300000
clear() { rm -f "$WORK"/h*"$src"/data; }
P=$PORT
# ranges: 127.0.0.2-6 are hosts 1-5
expect_status 0 "$RDMCP" "$src/data" "127.0.0.[2-4]:$P, 127.0.0.[5-6]:$P"
assert_copies 5 "$src/data"
# a host file, comments and blank lines; -x leaves host 5 out
clear
printf '# the rack\n127.0.0.[2-3]:%s\n\n127.0.0.4:%s, 127.0.0.[5-6]:%s # end\n' \
	"$P" "$P" "$P" >"$WORK/hosts"
expect_status 0 "$RDMCP" -f "$WORK/hosts" -x "127.0.0.6:$P" "$src/data"
assert_copies 4 "$src/data"
[ ! -e "$(landed 5 "$src/data")" ] || fail "-x did not exclude host 5"
grep -q "^4 of 4 replicas complete" "$WORK/out" || fail "$(cat "$WORK/out")"
# duplicates: copied to once, with a warning
clear
expect_status 0 "$RDMCP" "$src/data" "127.0.0.[2-3]:$P,127.0.0.2:$P"
grep -q "1 duplicate host ignored" "$WORK/err" || fail "$(cat "$WORK/err")"
grep -q "^2 of 2 replicas complete" "$WORK/out" || fail "$(cat "$WORK/out")"
# inside a Slurm allocation, the hosts may be left out
clear
SLURM_JOB_NODELIST="127.0.0.[2-4]:$P" expect_status 0 "$RDMCP" -v "$src/data"
grep -q "hosts from SLURM_JOB_NODELIST" "$WORK/err" || fail "$(cat "$WORK/err")"
assert_copies 3 "$src/data"
# a name with '/' is never a host: inside an allocation a mistyped second
# file is a missing file (3), not a host that cannot be resolved;
# outside one, a usage error (2)
SLURM_JOB_NODELIST="127.0.0.[2-4]:$P" expect_status 3 "$RDMCP" "$src/data" \
	"$src/typo.txt"
grep -q "cannot open .*typo.txt" "$WORK/err" || fail "$(cat "$WORK/err")"
! grep -q "typo" "$WORK/out" || fail "a file name taken as a host: $(cat "$WORK/out")"
expect_status 2 "$RDMCP" "$src/data" "$src/typo.txt"
grep -q "'$src/typo.txt' is not a host list but a file name" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
# -w as in pdsh and clush: repeatable, combined with -f; every argument
# is then a file
clear
make_file "$src/data2" 1000
printf '127.0.0.4:%s\n' "$P" >"$WORK/hosts1"
expect_status 0 "$RDMCP" -w "127.0.0.2:$P" --nodes "127.0.0.[3,5]:$P" \
	-f "$WORK/hosts1" "$src/data" "$src/data2"
grep -q "^4 of 4 replicas complete" "$WORK/out" || fail "-w: $(cat "$WORK/out")"
for i in 1 2 3 4; do
	cmp -s "$src/data2" "$(landed "$i" "$src/data2")" || fail "-w: host $i"
done
[ ! -e "$(landed 5 "$src/data")" ] || fail "-w: host 5 was not named"
rm -f "$WORK"/h*"$src"/data2
# a malformed expression: exit 2, the caret under the bad character,
# nothing written
clear
expect_status 2 "$RDMCP" "$src/data" "127.0.0.[2-x]:$P"
grep -q "'x' is not a number at character 12" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
grep -qx "             ^" "$WORK/err" || fail "no caret: $(cat "$WORK/err")"
# what is wrong, not what the parser made of it
expect_status 2 "$RDMCP" "$src/data" "node[01-0x]"
grep -q "'0x' is not a number at character 9" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
expect_status 2 "$RDMCP" "$src/data" "node[05-01]"
grep -q "range '05-01' goes backwards at character 6" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
for i in 1 2 3 4 5; do
	[ ! -e "$(landed "$i" "$src/data")" ] || fail "host $i got a file"
done
expect_status 2 "$RDMCP" -f "$WORK/nonexistent" "$src/data"
grep -q "cannot read host file" "$WORK/err" || fail "$(cat "$WORK/err")"
expect_status 2 "$RDMCP" -x "127.0.0.[2-6]:$P" "$src/data" "127.0.0.[2-6]:$P"
grep -q "all excluded" "$WORK/err" || fail "$(cat "$WORK/err")"
# one host with no daemon: the failed line and the files, compressed
clear
expect_status 1 "$RDMCP" --ok-file "$WORK/ok" --failed-file "$WORK/bad" \
	"$src/data" "127.0.0.[2-7]:$P"
grep -qx "rdmcp: failed: 127.0.0.7:$P" "$WORK/err" || fail "$(cat "$WORK/err")"
[ "$(cat "$WORK/ok")" = "127.0.0.[2-6]:$P" ] || fail "ok file: $(cat "$WORK/ok")"
[ "$(cat "$WORK/bad")" = "127.0.0.7:$P" ] || fail "failed file: $(cat "$WORK/bad")"
assert_copies 5 "$src/data"
# an unwritable report file is an error of its own (3), found before
# anything is sent; so are both files on one name (2)
clear
expect_status 3 "$RDMCP" --ok-file "$WORK/no/such/dir" "$src/data" \
	"127.0.0.2:$P"
grep -q "cannot write --ok-file '$WORK/no/such/dir': No such file or directory (nothing was sent)" \
	"$WORK/err" || fail "$(cat "$WORK/err")"
[ ! -e "$(landed 1 "$src/data")" ] || fail "sent before checking --ok-file"
mkdir "$WORK/isdir"
expect_status 3 "$RDMCP" --failed-file "$WORK/isdir" "$src/data" "127.0.0.2:$P"
grep -q "cannot write --failed-file .*Is a directory" "$WORK/err" ||
	fail "$(cat "$WORK/err")"
[ ! -e "$(landed 1 "$src/data")" ] || fail "sent before checking --failed-file"
# a bare name is in the current directory
(cd "$WORK" && expect_status 1 "$RDMCP" --failed-file bare "$src/data" \
	"127.0.0.2:$P,127.0.0.7:$P")
[ "$(cat "$WORK/bare")" = "127.0.0.7:$P" ] || fail "bare --failed-file: $(cat "$WORK/bare")"
clear
expect_status 2 "$RDMCP" --ok-file "$WORK/same" --failed-file "$WORK/same" \
	"$src/data" "127.0.0.2:$P"
[ ! -e "$WORK/same" ] || fail "the check created a file"
# --json: one valid object per line, the replicas then the summary, with
# the compressed host lists and the exit status
clear
expect_status 1 "$RDMCP" --json "$src/data" "127.0.0.[2-4]:$P,127.0.0.7:$P"
[ "$(wc -l <"$WORK/out")" -eq 5 ] || fail "$(cat "$WORK/out")"
jq -e . "$WORK/out" >/dev/null || fail "invalid JSON: $(cat "$WORK/out")"
[ "$(jq -s '[.[] | select(.event == "replica" and .ok)] | length' "$WORK/out")" = 3 ] ||
	fail "$(cat "$WORK/out")"
jq -s -e '[.[] | select(.event == "replica" and (.ok | not))] |
	length == 1 and .[0].host == "127.0.0.7:'"$P"'" and
	(.[0].reason | length > 0)' "$WORK/out" >/dev/null ||
	fail "$(cat "$WORK/out")"
tail -1 "$WORK/out" | jq -e '.event == "summary" and .hosts == 4 and
	.complete == 3 and .failed == 1 and .bytes == 300000 and .exit == 1 and
	.ok_hosts == "127.0.0.[2-4]:'"$P"'" and .failed_hosts == "127.0.0.7:'"$P"'"
	and .transport == "tcp"' >/dev/null || fail "summary: $(tail -1 "$WORK/out")"
# --progress into a file: plain lines for a log (progress.sh has more)
clear
make_file "$src/big" $((40 << 20))
expect_status 0 "$RDMCP" --progress -b 256K "$src/big" "127.0.0.[2-4]:$P"
grep -q "^rdmcp: progress: .* of 40.0 MiB (.*%), .*, ETA .*, .* hosts done$" \
	"$WORK/err" || fail "no progress line: $(cat -v "$WORK/err")"
! grep -q "$(printf '[\r\033]')" "$WORK/err" ||
	fail "control characters in a log: $(cat -v "$WORK/err")"
rm -f "$WORK"/h*"$src"/big
expect_status 0 "$RDMCP" -b 256K "$src/big" "127.0.0.[2-4]:$P"
[ ! -s "$WORK/err" ] || fail "stderr: $(cat -v "$WORK/err")"
