#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-docs.sh - the documentation agrees with the program (what
# 'make check-docs' runs).
#
#   1. man/rdmcp.1 is lint-clean: mandoc -Tlint -W warning prints nothing,
#      groff renders it (as man does) without a warning, the rendered
#      text shows no macro that swallowed its neighbours, and no cell of a
#      table is wider than its column;
#   2. the options of './rdmcp --help' and of the man page (Fl macros) are
#      the same, long and short, and agree on which take a value; options in HIDDEN are accepted by rdmcp and
#      documented in the man page but deliberately left out of --help;
#      every option in the long_options table of cmd/rdmcp.c is in the man
#      page, and so is every letter of its getopt string;
#   3. README.md exists and stays under 30 KB, the relative links of it
#      and of docs/ lead to files that exist, and its --plan sample is
#      what its command prints;
#   4. the bash and zsh completions offer every option of --help
#      (tests/completions.sh);
#   5. the includes keep to the layers of docs/architecture.md
#      (tests/check-layers.sh), and that check fails on copies of the tree
#      whose engine includes store/store.h, with a source file directly in
#      src/, or whose table has a loop;
#   6. the long_options table of cmd/rdmcp.c is sorted by long name, as
#      its comment says.
#
# Prints what it checked; exits 0 only if everything agrees.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$TOP"
RDMCP=./rdmcp
MAN=${CHECK_DOCS_MAN:-man/rdmcp.1}
README=README.md
MAIN_C=cmd/rdmcp.c
# Accepted and documented in the man page, not listed by --help.
HIDDEN="--window"

failures=0
fail() {
	echo "check-docs: FAIL: $*" >&2
	failures=$((failures + 1))
}
ok() {
	echo "check-docs: ok: $*"
}

# words_in: the words of standard input, one per line (letters, digits
# and dashes; everything else separates words).
words_in() {
	tr -c 'A-Za-z0-9-' '\n' | grep -v '^$' || true
}

# long_opts / short_opts: filter words down to --long or -x options.
long_opts() {
	grep -E '^--[a-z][a-z0-9-]*$' | sort -u || true
}
short_opts() {
	grep -E '^-[A-Za-z0-9]$' | sort -u || true
}

# man_flags FILE: every flag written with the Fl macro, as it renders
# ("Fl d" is -d, "Fl -dest" or "Fl \-dest" is --dest), one per line.
man_flags() {
	awk '
	/^[.\047]/ {
		n = split(substr($0, 2), w, /[ \t]+/)
		for (i = 1; i <= n; i++) {
			if (w[i] != "Fl")
				continue
			# Fl takes arguments up to the next macro or delimiter
			for (j = i + 1; j <= n; j++) {
				a = w[j]
				if (a ~ /^[A-Z][a-z][a-z]?$/ || a ~ /^[.,;:()\[\]?!|]$/)
					break
				gsub(/\\&/, "", a)
				gsub(/\\-/, "-", a)
				sub(/^"/, "", a)
				sub(/"$/, "", a)
				if (a != "")
					print "-" a
			}
			i = j - 1
		}
	}' "$1"
}

# diff_sets WHAT A B NAME_A NAME_B: report entries of one set missing from
# the other (sets are newline-separated, sorted, unique).
diff_sets() {
	local what=$1 a=$2 b=$3 na=$4 nb=$5 only_a only_b
	only_a=$(comm -23 <(printf '%s\n' "$a" | grep -v '^$' || true) \
		<(printf '%s\n' "$b" | grep -v '^$' || true) | tr '\n' ' ')
	only_b=$(comm -13 <(printf '%s\n' "$a" | grep -v '^$' || true) \
		<(printf '%s\n' "$b" | grep -v '^$' || true) | tr '\n' ' ')
	if [ -z "$only_a$only_b" ]; then
		ok "$what: $na and $nb agree ($(printf '%s\n' "$a" | grep -c . || true) options)"
		return 0
	fi
	[ -z "$only_a" ] || fail "$what: in $na but not in $nb: $only_a"
	[ -z "$only_b" ] || fail "$what: in $nb but not in $na: $only_b"
}

# --- 1. the man page is lint-clean --------------------------------------
if [ ! -f "$MAN" ]; then
	fail "$MAN is missing"
elif ! command -v mandoc >/dev/null 2>&1; then
	fail "mandoc is not installed (scripts/install-deps.sh installs it)"
else
	lint_rc=0
	lint=$(mandoc -Tlint -W warning "$MAN" 2>&1) || lint_rc=$?
	if [ -n "$lint" ] || [ "$lint_rc" -ne 0 ]; then
		fail "mandoc -Tlint -W warning $MAN (status $lint_rc):"
		printf '%s\n' "$lint" | sed 's/^/    /' >&2
	else
		ok "mandoc -Tlint -W warning $MAN: no warnings"
	fi
fi

# groff renders it as man(1) does, without a warning; and the text it
# renders has no traces of macros that swallowed their neighbours: doubled
# quotes ('("tcp or "verbs"")') or a parenthesis closed after an article
# or a preposition ('(... with a) --state-dir')
if ! command -v groff >/dev/null 2>&1; then
	fail "groff is not installed (man-db needs it; scripts/install-deps.sh)"
elif [ -f "$MAN" ]; then
	groff_err=$(groff -ww -mandoc -Tutf8 "$MAN" 2>&1 >/dev/null) || true
	if [ -n "$groff_err" ]; then
		fail "groff -ww -mandoc -Tutf8 $MAN:"
		printf '%s\n' "$groff_err" | sed 's/^/    /' >&2
	else
		ok "groff -ww -mandoc -Tutf8 $MAN: no warnings"
	fi
	rendered=$(groff -mandoc -Tutf8 -P-cbou "$MAN" 2>/dev/null)
	bad=$(printf '%s\n' "$rendered" |
		grep -nE '""|\<(a|an|the|with|of|to|and|or)\)' || true)
	if [ -n "$bad" ]; then
		fail "$MAN renders oddly (a macro swallowed its neighbours?):"
		printf '%s\n' "$bad" | sed 's/^/    /' >&2
	else
		ok "$MAN: no doubled quotes or dangling parentheses in the rendered text"
	fi
	# a cell of a .Bl -column table wider than its column's width string
	# runs into the next column in groff ("a different file or a
	# linkrefused"); the last column may wrap
	wide=$(awk '
	/^\.Bl -column/ {
		ncol = 0
		line = $0
		while (match(line, /"[^"]*"/)) {
			w[++ncol] = RLENGTH - 2
			line = substr(line, RSTART + RLENGTH)
		}
		intable = 1
		next
	}
	/^\.El/ { intable = 0 }
	intable && /^\.It / {
		n = split(substr($0, 5), cell, / Ta /)
		for (i = 1; i < n && i <= ncol; i++) {
			text = cell[i]
			gsub(/(^| )(Sy|Ar|Li|Cm|Em|Ql|Pq|No|Ns)( |$)/, " ", text)
			gsub(/(^| )Fl /, " -", text)
			gsub(/^ +| +$/, "", text)
			gsub(/  +/, " ", text)
			if (length(text) > w[i])
				printf "line %d: \"%s\" (%d) is wider than column %d (%d)\n",
					NR, text, length(text), i, w[i]
		}
	}' "$MAN")
	if [ -n "$wide" ]; then
		fail "$MAN: table cells wider than their column (groff runs them into the next):"
		printf '%s\n' "$wide" | sed 's/^/    /' >&2
	else
		ok "$MAN: every table cell fits its column"
	fi
fi

# --- 2. options: --help, man page, source ------------------------------
if [ ! -x "$RDMCP" ]; then
	fail "$RDMCP is not built (run 'make')"
elif [ -f "$MAN" ]; then
	help=$("$RDMCP" --help) || fail "'$RDMCP --help' failed"
	help_long=$(printf '%s\n' "$help" | words_in | long_opts)
	help_short=$(printf '%s\n' "$help" | words_in | short_opts)
	man_long=$(man_flags "$MAN" | long_opts)
	man_short=$(man_flags "$MAN" | short_opts)
	[ -n "$help_long" ] || fail "no long options found in --help"
	[ -n "$man_long" ] || fail "no long options found in $MAN"

	# hidden options: accepted by rdmcp, in the man page, not in --help
	hidden=
	for opt in $HIDDEN; do
		if printf '%s\n' "$help_long" | grep -qxe "$opt"; then
			continue	# listed after all: an ordinary option
		fi
		if timeout 5 "$RDMCP" "$opt" </dev/null 2>&1 >/dev/null |
			grep -qi "unrecognized option"; then
			fail "hidden option $opt: rdmcp does not accept it"
		fi
		printf '%s\n' "$man_long" | grep -qxe "$opt" ||
			fail "hidden option $opt is not documented in $MAN"
		hidden="$hidden$opt"$'\n'
	done
	visible_man_long=$(comm -23 <(printf '%s\n' "$man_long") \
		<(printf '%s' "$hidden" | sort -u))

	diff_sets "long options" "$help_long" "$visible_man_long" \
		"--help" "$MAN (hidden: $(echo $HIDDEN))"

	# and they agree on which take a value: "--name NAME" in --help,
	# ".It Fl -name Ar name" in the man page
	help_args=$(printf '%s\n' "$help" |
		grep -E '^  (-[A-Za-z], |    )--[a-z]' |
		awk '{ i = ($1 ~ /,$/) ? 2 : 1
			print $i, ($(i + 1) ~ /^[A-Z]/) ? "value" : "flag" }' |
		sort -u)
	man_args=$(awk '/^\.It Fl/ {
		n = split($0, w, /[ \t]+/); opt = ""; arg = "flag"
		for (i = 1; i <= n; i++) {
			if (w[i] == "Fl" && w[i + 1] ~ /^(\\)?-[a-z]/) {
				opt = w[i + 1]; gsub(/\\/, "", opt); opt = "-" opt
			}
			if (opt != "" && (w[i] == "Ar" || w[i] == "Cm"))
				arg = "value"
		}
		if (opt != "") print opt, arg
	}' "$MAN" | sort -u)
	differ=$(join <(printf '%s\n' "$help_args") <(printf '%s\n' "$man_args") |
		awk '$2 != $3 { printf "%s (--help: %s, man: %s) ", $1, $2, $3 }')
	if [ -n "$differ" ]; then
		fail "options that take a value in one but not the other: $differ"
	else
		ok "--help and $MAN agree on which of $(printf '%s\n' "$help_args" | grep -c .) options take a value"
	fi
	diff_sets "short options" "$help_short" "$man_short" "--help" "$MAN"

	# the option table itself, so that no accepted option goes unmentioned
	if [ -f "$MAIN_C" ]; then
		src_long=$(sed -n '/long_options\[\] *= *{/,/^};/p' "$MAIN_C" |
			sed -n 's/^[[:space:]]*{ *"\([a-z][a-z0-9-]*\)".*/--\1/p' |
			sort -u)
		optstring=$(sed -n 's/.*getopt_long([^"]*"\([^"]*\)".*/\1/p' \
			"$MAIN_C" | head -1)
		src_short=$(printf '%s' "$optstring" | tr -d ':' | fold -w1 |
			sed 's/^/-/' | sort -u)
		if [ -z "$src_long" ] || [ -z "$src_short" ]; then
			fail "could not read the option table of $MAIN_C"
		else
			diff_sets "long options" "$src_long" "$man_long" \
				"$MAIN_C" "$MAN"
			diff_sets "short options" "$src_short" "$man_short" \
				"$MAIN_C" "$MAN"
		fi
	fi
fi

# --- 3. README and docs/ -----------------------------------------------------
if [ ! -f "$README" ]; then
	fail "$README is missing"
elif [ "$(wc -c <"$README")" -gt 30720 ]; then
	fail "$README is $(wc -c <"$README") bytes: a user's README stays under 30 KB (the rest goes to docs/)"
else
	ok "$README is $(wc -c <"$README") bytes"
fi
# every relative link of the README and docs/ leads to a file that exists
for doc in "$README" docs/*.md HACKING.md; do
	[ -f "$doc" ] || continue
	for target in $(grep -o '](\([^)#:]*\)[)#]' "$doc" | sed 's/^](//; s/[)#]$//' | sort -u); do
		[ -e "$(dirname "$doc")/$target" ] ||
			fail "$doc links to $target, which does not exist"
	done
done
ok "the links of $README and docs/ lead to files that exist"
# the README's --plan sample is what its command prints
plan_cmd=$(sed -n '/^\$ rdmcp --plan/,/^step 0:/p' "$README" | sed '$d' |
	sed 's/^\$ rdmcp /"$RDMCP" /')
plan_want=$(sed -n '/^\$ rdmcp --plan/,/^```/p' "$README" | grep '^step ' || true)
if [ -z "$plan_cmd" ] || [ -z "$plan_want" ]; then
	fail "$README: no '\$ rdmcp --plan' sample with its output"
elif [ "$(RDMCP=$RDMCP bash -c "$plan_cmd" 2>&1)" != "$plan_want" ]; then
	fail "$README: the --plan sample is not what its command prints:"
	RDMCP=$RDMCP bash -c "$plan_cmd" 2>&1 | sed 's/^/    /' >&2
else
	ok "$README: the --plan sample is what its command prints"
fi

# --- 4. shell completions --------------------------------------------------
if [ -x "$RDMCP" ]; then
	tests/completions.sh || fail "shell completions (tests/completions.sh)"
fi

# --- 5. layers -----------------------------------------------------------------
if tests/check-layers.sh; then
	ok "includes keep to the layers of docs/architecture.md"
else
	fail "includes break the layers of docs/architecture.md (tests/check-layers.sh)"
fi
# the check can fail: a copy whose engine knows files, a copy with a
# source file outside the folders, and a copy whose table has a loop
layers_tmp=$(mktemp -d)
plant_fails() {	# WHAT: check-layers must fail on $layers_tmp/t
	if tests/check-layers.sh "$layers_tmp/t" >/dev/null 2>&1; then
		fail "check-layers passes a copy $1"
	else
		ok "check-layers fails on a copy $1"
	fi
	rm -rf "$layers_tmp/t"
}
copy_tree() {
	mkdir -p "$layers_tmp/t" && cp -r docs src cmd "$layers_tmp/t/"
}
copy_tree
sed -i '0,/^#include "util\/log.h"/s//#include "util\/log.h"\n#include "store\/store.h"/' \
	"$layers_tmp/t/src/engine/engine.c"
if grep -q '^#include "store/store.h"' "$layers_tmp/t/src/engine/engine.c"; then
	plant_fails "whose engine includes store/store.h"
else
	fail "could not plant a bad include in a copy of src/engine/engine.c"
fi
copy_tree
cp src/util/json.c "$layers_tmp/t/src/stray.c"
plant_fails "with a source file directly in src/"
copy_tree
sed -i 's/^| `src\/sched` | /| `src\/sched` | engine /' "$layers_tmp/t/docs/architecture.md"
plant_fails "whose table lets sched and engine include each other"
rm -rf "$layers_tmp"

# --- 6. the option table is sorted ---------------------------------------------
if [ -f "$MAIN_C" ]; then
	table=$(sed -n '/long_options\[\] *= *{/,/^};/p' "$MAIN_C" |
		sed -n 's/^[[:space:]]*{ *"\([a-z][a-z0-9-]*\)".*/\1/p')
	if [ "$table" = "$(printf '%s\n' "$table" | LC_ALL=C sort)" ]; then
		ok "the long_options table of $MAIN_C is sorted"
	else
		fail "the long_options table of $MAIN_C is not sorted by long name"
	fi
fi

if [ "$failures" -gt 0 ]; then
	echo "check-docs: $failures check(s) failed" >&2
	exit 1
fi
echo "check-docs: all documentation checks passed"
