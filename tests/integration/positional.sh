# SPDX-License-Identifier: MIT
# Positional mistakes from other tools' habits are usage errors (exit 2)
# that name the argument, before anything is sent: pdcp's 'pdcp -w HOSTS
# -r SRC DEST' (a last argument that is a directory here, the hosts given
# otherwise, no -d), a forgotten host list (the last argument a file
# here, or a mistyped file name no host has).  A name that does not
# resolve is not sent to again, a refused connection once at most, and
# the retry line says the bound a host's own failures have.
. "$(dirname "$0")/../lib.sh"
start_daemons 2
P=$PORT
job=$WORK/job
mkdir -p "$job/src/sub" "$job/dest"
make_file "$job/src/sub/a" 1000
make_file "$job/solver" 2000
make_file "$job/input.dat" 3000
prepare_dirs 2 "$job"
nothing_sent() {
	local left
	left=$(find "$WORK/h1" "$WORK/h2" -mindepth 1 ! -type d | head -3)
	[ -z "$left" ] || fail "$1: something was sent: $left"
}
cd "$job"

# pdcp's habit: the destination last, the hosts with -w; and inside an
# allocation, with the hosts from SLURM_JOB_NODELIST
expect_status 2 "$RDMCP" -w "127.0.0.[2-3]:$P" -r src "$job/dest"
grep -qF "'$job/dest', last, is a directory here: did you mean -d $job/dest/?" \
	"$WORK/err" || fail "pdcp -w: $(cat "$WORK/err")"
SLURM_JOB_NODELIST="127.0.0.[2-3]:$P" expect_status 2 "$RDMCP" -r src dest
grep -qF "'dest', last, is a directory here: did you mean -d dest/?" \
	"$WORK/err" || fail "pdcp in an allocation: $(cat "$WORK/err")"
# without -r too: what was meant is the destination, not a directory
expect_status 2 "$RDMCP" -f - solver dest <<<"127.0.0.[2-3]:$P"
grep -q "did you mean -d dest/?" "$WORK/err" || fail "-f: $(cat "$WORK/err")"
nothing_sent "pdcp's habit"
# with -d it is a source like the others, and 'DIR/.' names it as one
expect_status 0 "$RDMCP" -w "127.0.0.[2-3]:$P" -r -d "$job/dest/" src solver
[ -f "$(landed 1 "$job/dest/src/sub/a")" ] || fail "-d: no tree"
expect_status 0 "$RDMCP" -w "127.0.0.[2-3]:$P" -r src dest/.
[ -f "$(landed 2 "$job/src/sub/a")" ] && [ -d "$(landed 2 "$job/dest")" ] ||
	fail "'dest/.' was not copied as a source: $(cat "$WORK/out" "$WORK/err")"
rm -rf "$WORK/h1$job"/* "$WORK/h2$job"/*

# the host list forgotten: the last argument is a file here
expect_status 2 "$RDMCP" -d "$job/" solver input.dat
grep -qF "'input.dat', last, is where the hosts go, but it is a file here: are the hosts missing?" \
	"$WORK/err" || fail "forgotten hosts: $(cat "$WORK/err")"
! grep -q "failed: input.dat" "$WORK/err" || fail "a file blamed as a host"
expect_status 2 "$RDMCP" -r -d "$job/" solver src
grep -qF "'src', last, is where the hosts go, but it is a directory here" \
	"$WORK/err" || fail "forgotten hosts, a directory: $(cat "$WORK/err")"
# ... or a mistyped file name, which no host has either
expect_status 2 "$RDMCP" -d "$job/" solver inptu.dat
grep -qF "'inptu.dat', last, is where the hosts go, but no host has that name, and no file here either" \
	"$WORK/err" || fail "typo: $(cat "$WORK/err")"
# inside an allocation it is a file, and a missing one (as a name with a
# '/'): the job script excludes no node named after it
SLURM_JOB_NODELIST="127.0.0.[2-3]:$P" expect_status 3 "$RDMCP" -d "$job/" \
	solver inptu.dat
grep -q "cannot open inptu.dat: No such file" "$WORK/err" ||
	fail "typo in an allocation: $(cat "$WORK/err")"
! grep -q "inptu" "$WORK/out" || fail "a file taken for a host: $(cat "$WORK/out")"
nothing_sent "a forgotten host list"
# a host named as a local file: -w says it is a host
mkdir -p "$job/127.0.0.2:$P"
expect_status 2 "$RDMCP" -d "$job/" solver "127.0.0.2:$P"
expect_status 0 "$RDMCP" -d "$job/" -w "127.0.0.2:$P" solver
rmdir "$job/127.0.0.2:$P"
rm -f "$(landed 1 "$job/solver")"
cd "$WORK"

# a name that does not resolve is not sent to again; a refused
# connection once, whatever --retries says, and the line says so
expect_status 1 "$RDMCP" --retries 3 "$job/solver" "nosuch.invalid:$P,127.0.0.2:$P"
grep -q "cannot resolve nosuch.invalid" "$WORK/out" || fail "$(cat "$WORK/out")"
if grep -q "temporary failure" "$WORK/out"; then
	note "the resolver cannot tell that nosuch.invalid does not exist: not checked"
else
	! grep -q retrying "$WORK/err" || fail "an unknown name retried: $(cat "$WORK/err")"
fi
expect_status 1 "$RDMCP" --retries 3 --json "$job/solver" "127.0.0.9:$P"
[ "$(grep -c retrying "$WORK/err")" -eq 1 ] || fail "refused: $(cat "$WORK/err")"
grep -qF "retrying 1 host that failed (attempt 2: retry 1 of at most 1): 127.0.0.9:$P" \
	"$WORK/err" || fail "the bound: $(cat "$WORK/err")"
tail -1 "$WORK/out" | jq -e '.attempts == 2' >/dev/null || fail "$(tail -1 "$WORK/out")"
