# SPDX-License-Identifier: MIT
# What the report says is what the hosts hold, in the small cases: a
# sender-side error blames no host, one host under two names is one host,
# --verify says what it checked.  (Faults at scale: scale_truth.sh.)
. "$(dirname "$0")/../lib.sh"
start_daemons 3
src=$WORK/src
mkdir -p "$src"
prepare_dirs 3 "$src"
make_file "$src/data" 200000

# the sender's own errors: exit 3, no host failed, the files empty
long=$src/$(printf 'x%.0s' $(seq 1 256))
for bad in "$src/missing" "$long"; do
	expect_status 3 "$RDMCP" --failed-file "$WORK/failed" --ok-file "$WORK/ok" \
		"$bad" "$(hosts 3)"
	! grep -q "failed:" "$WORK/err" || fail "hosts blamed: $(cat "$WORK/err")"
	[ -f "$WORK/failed" ] && [ ! -s "$WORK/failed" ] || fail "failed file: $(cat "$WORK/failed")"
	[ -f "$WORK/ok" ] && [ ! -s "$WORK/ok" ] || fail "ok file: $(cat "$WORK/ok")"
	expect_status 3 "$RDMCP" --json "$bad" "$(hosts 3)"
	jq -es '.[-1] | .event == "summary" and .failed == 0 and
		.failed_hosts == "" and (.error | length > 0) and .exit == 3' \
		"$WORK/out" >/dev/null ||
		fail "json: $(cat "$WORK/out")"
done
note "a sender-side error (missing source, 256-byte name): exit 3, no host failed"

# one host under two spellings: copied to once, reported under both
a=$(host_addr 1)
expect_status 0 "$RDMCP" -P "$PORT" --json "$src/data" "$a,$a:$PORT,$(host_addr 2)"
grep -q "are the same host" "$WORK/err" || fail "no warning: $(cat "$WORK/err")"
[ "$(jq -s '[.[] | select(.event == "replica" and .ok)] | length' "$WORK/out")" = 3 ] ||
	fail "report: $(cat "$WORK/out")"
[ "$(grep -c "job .* from" "$WORK/daemon1.log")" = 1 ] || fail "host 1 got $(grep -c "job .* from" "$WORK/daemon1.log") jobs"
assert_copies 2 "$src/data"
note "one host under two names: one job, reported ok under both"

# --verify: each replica says it was checked
rm -f "$(landed 1 "$src/data")" "$(landed 2 "$src/data")"
expect_status 0 "$RDMCP" -v --verify "$src/data" "$(hosts 3)"
[ "$(grep -cE "^[^ ]+ +ok +[0-9.]+ s .*verified" "$WORK/out")" = 3 ] || fail "text: $(cat "$WORK/out")"
grep -qx "127.0.0.\[2-4\]:$PORT: ok, verified (3 hosts, [0-9.]* to [0-9.]* s)" \
	"$WORK/out" || fail "grouped: $(cat "$WORK/out")"
rm -f "$(landed 1 "$src/data")"
expect_status 0 "$RDMCP" --verify --json "$src/data" "$(hosts 1)"
jq -es '[.[] | select(.event == "replica")][0].verified' "$WORK/out" >/dev/null ||
	fail "json: $(cat "$WORK/out")"
rm -f "$(landed 1 "$src/data")"
expect_status 0 "$RDMCP" --json "$src/data" "$(hosts 1)"
jq -es '[.[] | select(.event == "replica")][0].verified == false' "$WORK/out" >/dev/null ||
	fail "verified without --verify: $(cat "$WORK/out")"
note "--verify: 'verified' per replica, in text and JSON"
assert_no_temporaries
