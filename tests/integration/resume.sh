# SPDX-License-Identifier: MIT
# A broken push resumes (issue 37, items 1 and 2): what landed stays, and
# is not sent again.
#   - the sender interrupted (SIGINT) once more than half of the file is
#     on every host: the daemons keep their unfinished copies; the same
#     command run again sends at most 55 % of the file, and every copy is
#     the source's, reported ok;
#   - the same to a directory whose parents are missing (-d DIR/ makes
#     them, and takes them away again with a push that does not land);
#   - the same after SIGKILL of the sender;
#   - a source changed since (another time): no copy of it is resumed;
#   - a member killed mid-push: the retry sends the others what they lack,
#     and the whole push sends at most 1.6 times the file.
. "$(dirname "$0")/../lib.sh"
start_daemons 3
size=$((32 << 20))
src=$WORK/src
mkdir -p "$src"
make_file "$src/data" "$size"
stage=$WORK/stage
prepare_dirs 3 "$stage"
dest=$stage/	# where the pushes land
on() {
	echo "$WORK/h$1$dest/data"
}
# summary FIELD: the summary's FIELD
summary() {
	jq -r "select(.event == \"summary\") | .$1" "$WORK/out"
}
all_same() {
	local i
	for i in "$@"; do
		cmp -s "$src/data" "$(on "$i")" || fail "host $i: not the source's bytes"
		assert_json_ok "resume" "$i"
	done
}
# mid_landed I: host I's unfinished copy holds data at half the file (a
# temporary, or a file in a new directory made under a temporary name)
mid_landed() {
	local f
	for f in $(find "$WORK/h$1$stage" -path '*/.*.rdmcp-*' -type f 2>/dev/null); do
		[ -n "$(dd if="$f" bs=4096 skip=$((size / 2 / 4096)) count=1 status=none |
			tr -d '\000' | head -c 1)" ] && return 0
	done
	return 1
}
# interrupt SIGNAL: a slow push, stopped by SIGNAL once host 3 (the
# chain's last) holds half of the file, then each daemon keeps its copy
interrupt() {
	local pid t i n=()
	for i in 1 2 3; do
		n[i]=$(grep -c "kept 1 unfinished copy" "$WORK/daemon$i.log" || true)
	done
	# (a job started in the background of a script ignores SIGINT: not this)
	env --default-signal=INT "$RDMCP" -a chain -b 256K --bwlimit 4M -d "$dest" "$src/data" \
		"$(hosts 3)" >"$WORK/slow.out" 2>&1 &
	pid=$!
	for t in $(seq 1 600); do
		mid_landed 3 && break
		sleep 0.1
	done
	mid_landed 3 || {
		kill -9 "$pid" 2>/dev/null || true
		fail "half of the file never landed on host 3 (to $dest): $(cat "$WORK/slow.out"; find "$WORK/h3$stage" 2>&1 | head -20; tail -n 5 "$WORK/daemon3.log")"
	}
	kill "-$1" "$pid"
	wait "$pid" 2>/dev/null || true
	for i in 1 2 3; do
		for t in $(seq 1 100); do
			[ "$(grep -c "kept 1 unfinished copy" "$WORK/daemon$i.log" || true)" -gt "${n[i]}" ] &&
				break
			sleep 0.1
		done
		[ "$(grep -c "kept 1 unfinished copy" "$WORK/daemon$i.log" || true)" -gt "${n[i]}" ] ||
			fail "daemon $i kept no copy after SIG$1: $(tail -n 5 "$WORK/daemon$i.log")"
	done
}
push() {
	expect_status "$1" "$RDMCP" --json -a chain -b 256K "${@:2}" -d "$dest" \
		"$src/data" "$(hosts 3)"
}

interrupt INT
push 0
all_same 1 2 3
[ "$(json_sent)" -le $((size * 55 / 100)) ] || fail "after SIGINT: sent $(json_sent) of $size"
note "after SIGINT: sent $(json_sent) of $size bytes, $(summary resumed) resumed over the hosts"
# what the hosts held came from their kept copies, and is said so
[ "$(summary resumed)" -gt 0 ] && [ "$(summary reused)" -eq 0 ] ||
	fail "after SIGINT: resumed $(summary resumed), reused $(summary reused)"
[ "$(jq -s '[.[] | select(.event == "replica") | .resumed] | add' "$WORK/out")" -eq "$(summary resumed)" ] ||
	fail "the hosts' resumed bytes do not add up to the summary's: $(cat "$WORK/out")"
grep -q "resuming" "$WORK/daemon3.log" || fail "daemon 3 did not say it resumed"
assert_no_temporaries

# to a directory that is not there yet: made for the push, taken away
# when it broke; the copies kept are found all the same
rm -f "$(on 1)" "$(on 2)" "$(on 3)"
dest=$stage/new/deeper/
interrupt INT
for i in 1 2 3; do
	[ ! -e "$WORK/h$i$stage/new" ] ||
		fail "host $i kept $stage/new after the push broke: the case is not made"
done
push 0
all_same 1 2 3
[ "$(json_sent)" -le $((size * 55 / 100)) ] || fail "to missing parents: sent $(json_sent) of $size"
note "to missing parents: sent $(json_sent) of $size bytes"
assert_no_temporaries
for i in 1 2 3; do rm -rf "$WORK/h$i$stage/new"; done
dest=$stage/

rm -f "$(on 1)" "$(on 2)" "$(on 3)"
interrupt KILL
push 0
all_same 1 2 3
[ "$(json_sent)" -le $((size * 55 / 100)) ] || fail "after SIGKILL: sent $(json_sent) of $size"
note "after SIGKILL: sent $(json_sent) of $size bytes"
assert_no_temporaries

# another source (its time changed): nothing kept is its
rm -f "$(on 1)" "$(on 2)" "$(on 3)"
interrupt INT
touch -d '2001-01-01' "$src/data"
push 0
all_same 1 2 3
[ "$(json_sent)" -eq "$size" ] || fail "a changed source: sent $(json_sent) of $size"
[ "$(summary resumed)" -eq 0 ] || fail "a changed source: resumed $(summary resumed)"
assert_no_temporaries

# a member killed mid-push: the retry resumes the others
rm -f "$(on 1)" "$(on 2)" "$(on 3)"
"$RDMCP" --json -a chain -b 256K --bwlimit 4M --retries 1 -t 3 -d "$stage/" \
	"$src/data" "$(hosts 3)" >"$WORK/out" 2>"$WORK/err" &
pid=$!
for t in $(seq 1 600); do
	mid_landed 3 && break
	sleep 0.1
done
mid_landed 3 || fail "half of the file never landed on host 3"
n=$(grep -c "resuming" "$WORK/daemon3.log" || true)
kill_daemon 2
wait "$pid" || true
grep -q '"event":"summary".*"attempts":2' "$WORK/out" || fail "no retry: $(cat "$WORK/out")"
[ "$(grep -c "resuming" "$WORK/daemon3.log")" -gt "$n" ] ||
	fail "host 3 did not resume: $(tail -n 5 "$WORK/daemon3.log")"
all_same 1 3
[ ! -e "$(on 2)" ] || fail "host 2, killed, holds a copy"
grep -q "\"host\":\"$(host_addr 2):$PORT\",[^}]*\"ok\":false" "$WORK/out" ||
	fail "host 2 not reported failed: $(cat "$WORK/out")"
[ "$(json_sent)" -le $((size * 16 / 10)) ] || fail "a member killed: sent $(json_sent) of $size"
note "a member killed: sent $(json_sent) of $size bytes over the attempts"

# no room for a new copy beside the kept one: the kept one is given up,
# and the push that would fit without it lands (resuming saves bytes,
# never fails a push); the other hosts still resume; a dry run before
# predicts as much
[ "$(id -u)" -eq 0 ] || { note "skipped: the last part mounts a tmpfs (root)"; exit 77; }
restart_daemon 2
rm -f "$(on 1)" "$(on 2)" "$(on 3)"
mount -t tmpfs -o size=40m rdmcp-small "$WORK/h3$stage"
on_exit umount -l "$WORK/h3$stage"
interrupt INT
avail=$(( $(stat -f -c '%a * %S' "$WORK/h3$stage") ))
[ "$avail" -lt "$size" ] ||
	fail "host 3 has room for a copy beside its kept one ($avail bytes free): the case is not made"
# a dry run predicts it: host 3 would give its kept copy up and take
# every block (not fail for want of room), and nothing changes
push 0 -n
[ "$(jq -r "select(.event == \"replica\" and .host == \"$(host_addr 3):$PORT\") | \"\(.ok) \(.resumed)\"" "$WORK/out")" = "true 0" ] ||
	fail "dry run: host 3 not predicted to give its kept copy up: $(cat "$WORK/out")"
grep -q "a dry run: no room for new copies beside the unfinished ones kept" "$WORK/daemon3.log" ||
	fail "dry run: host 3 did not say why: $(tail -n 5 "$WORK/daemon3.log")"
[ "$(( $(stat -f -c '%a * %S' "$WORK/h3$stage") ))" -eq "$avail" ] ||
	fail "dry run: host 3's free space changed"
push 0
all_same 1 2 3
grep -q "no room for new copies beside the unfinished ones kept" "$WORK/daemon3.log" ||
	fail "host 3 did not give its kept copy up: $(tail -n 5 "$WORK/daemon3.log")"
[ "$(jq -r "select(.event == \"replica\" and .host == \"$(host_addr 3):$PORT\") | .resumed" "$WORK/out")" -eq 0 ] ||
	fail "host 3 resumed from a copy it gave up: $(cat "$WORK/out")"
[ "$(summary resumed)" -gt 0 ] || fail "hosts 1 and 2 did not resume: $(cat "$WORK/out")"
note "no room beside the kept copy on host 3 ($avail bytes free of 40 MiB): given up, the push landed; $(summary resumed) bytes resumed elsewhere"
assert_no_temporaries
