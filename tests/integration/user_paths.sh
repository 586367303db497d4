# SPDX-License-Identifier: MIT
# Paths in messages are the user's, as written with -d (issue 39, item
# 3), so that one failure of many hosts folds into one line: a missing
# -d directory, a file that exists, a tree's directory in the way printed
# each daemon's own path (its --prefix, or where a link led), one line
# per host.  Here each host's daemon has a --prefix of its own, and on
# host 1 the stage is a link to another directory.
. "$(dirname "$0")/../lib.sh"
start_daemons 4
src=$WORK/src
mkdir -p "$src/tree"
make_file "$src/data" 2000
make_file "$src/tree/f" 2000
stage=$WORK/stage
for i in 2 3 4; do mkdir -p "$WORK/h$i$stage"; done
mkdir -p "$WORK/h1$WORK/real"
ln -s real "$WORK/h1$stage"

# one_line OUTCOME: the report is that one grouped line for the 4 hosts
one_line() {
	[ "$(grep -c "FAILED" "$WORK/out")" -eq 1 ] ||
		fail "not one line: $(cat "$WORK/out")"
	grep -qxF "127.0.0.[2-5]:$PORT: FAILED (4 hosts): $1" "$WORK/out" ||
		fail "want '$1': $(cat "$WORK/out")"
	! grep -q "$WORK/h[0-9]\|$WORK/real" "$WORK/out" ||
		fail "a daemon's own path: $(cat "$WORK/out")"
}

# a -d directory that is missing everywhere
expect_status 1 "$RDMCP" --retries 0 -d "$WORK/nowhere" "$src/data" "$(hosts 4)"
one_line "destination directory $WORK/nowhere: No such file or directory (-d DIR/, with a trailing slash, makes it and its parents)"

# a file that exists and differs, everywhere
for i in 1 2 3 4; do echo other >"$(landed "$i" "$stage")/data"; done
expect_status 1 "$RDMCP" --retries 0 -d "$stage" "$src/data" "$(hosts 4)"
one_line "$stage/data exists and differs from the source (--force replaces it)"

# a file where the tree's directory lands, everywhere
for i in 1 2 3 4; do echo file >"$(landed "$i" "$stage")/tree"; done
expect_status 1 "$RDMCP" --retries 0 -r --force -d "$stage" "$src/tree" "$(hosts 4)"
one_line "$stage/tree exists and is a file, not a directory"
assert_no_temporaries
