#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# completions.sh - the bash and zsh completions offer every option that
# 'rdmcp --help' lists, offer no option rdmcp does not accept, and
# complete option values (run by tests/check-docs.sh, i.e. make check-docs).
#
#   bash: sources completions/rdmcp.bash and calls its function the way
#         bash does (COMP_WORDS, COMP_CWORD), reading COMPREPLY;
#   zsh:  zsh -n on completions/_rdmcp, then zsh's real completion system
#         (compinit in an interactive zsh on a pseudo-terminal,
#         tests/helpers/zsh-complete.zsh) completes command lines.
#
# Prints what it checked; exits 0 only if everything holds.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$TOP"
RDMCP=${RDMCP:-./rdmcp}
BASH_COMP=completions/rdmcp.bash
ZSH_COMP=completions/_rdmcp
ZSH_HARNESS=$TOP/tests/helpers/zsh-complete.zsh
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rdmcp-completions.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

devnull_was_device=$([ -c /dev/null ] && echo yes || echo no)
failures=0
fail() {
	echo "completions: FAIL: $*" >&2
	failures=$((failures + 1))
}
ok() {
	echo "completions: ok: $*"
}

# the options: every -x and --long word of --help; the accepted ones are
# those plus the long_options table of cmd/rdmcp.c (hidden ones, --window)
help=$("$RDMCP" --help)
help_opts=$(printf '%s\n' "$help" | tr -c 'A-Za-z0-9-' '\n' |
	grep -E '^(--[a-z][a-z0-9-]*|-[A-Za-z0-9])$' | sort -u)
[ "$(printf '%s\n' "$help_opts" | grep -c .)" -ge 30 ] ||
	fail "read only $(printf '%s\n' "$help_opts" | grep -c .) options from --help"
table_opts=$(sed -n '/long_options\[\] *= *{/,/^};/p' cmd/rdmcp.c |
	sed -n 's/^[[:space:]]*{ *"\([a-z][a-z0-9-]*\)".*/--\1/p')
accepted=$(printf '%s\n%s\n' "$help_opts" "$table_opts" | sort -u)

# check_set SHELL OFFERED: OFFERED (one option per line) holds every option
# of --help and nothing rdmcp does not accept
check_set() {
	local sh=$1 offered missing extra
	offered=$(printf '%s\n' "$2" | { grep -E '^-' || true; } | sort -u)
	missing=$(comm -23 <(printf '%s\n' "$help_opts") \
		<(printf '%s\n' "$offered") | tr '\n' ' ')
	extra=$(comm -13 <(printf '%s\n' "$accepted") \
		<(printf '%s\n' "$offered") | tr '\n' ' ')
	[ -z "$missing" ] || fail "$sh: --help lists, completion does not offer: $missing"
	[ -z "$extra" ] || fail "$sh: completion offers options rdmcp does not accept: $extra"
	[ -n "$missing$extra" ] ||
		ok "$sh: offers all $(printf '%s\n' "$help_opts" | grep -c .) options of --help, and only accepted ones"
}

# the options that take a value ("--name NAME" in --help): each completion
# must know it, or it completes a file or a host where the value goes
value_opts=$(printf '%s\n' "$help" | grep -E '^  (-[A-Za-z], |    )--[a-z]' |
	awk '{ i = ($1 ~ /,$/) ? 2 : 1; if ($(i + 1) ~ /^[A-Z]/) print $i }' |
	sort -u)
[ "$(printf '%s\n' "$value_opts" | grep -c .)" -ge 20 ] ||
	fail "read only $(printf '%s\n' "$value_opts" | grep -c .) options with values from --help"
bash_values=$(sed -n '/case \$prev in/,/esac/p' "$BASH_COMP" |
	grep -oE -- '--[a-z][a-z-]*' | sort -u)
unknown=$(comm -23 <(printf '%s\n' "$value_opts") <(printf '%s\n' "$bash_values") |
	tr '\n' ' ')
[ -z "$unknown" ] || fail "bash: options whose value it does not know of: $unknown"
unknown=
for opt in $value_opts; do
	grep -q -- "$opt=" "$ZSH_COMP" || unknown="$unknown$opt "
done
[ -z "$unknown" ] || fail "zsh: options it does not give a value: $unknown"
[ -n "$unknown" ] || ok "both know the $(printf '%s\n' "$value_opts" | grep -c .) options that take a value"

# expect SHELL WHAT GOT WANT: the sorted words GOT are exactly WANT
expect() {
	local got want
	got=$(printf '%s\n' "$3" | { grep -v '^$' || true; } | sort -u |
		tr '\n' ' ')
	want=$(printf '%s\n' $4 | { grep -v '^$' || true; } | sort -u |
		tr '\n' ' ')
	if [ "$got" = "$want" ]; then
		ok "$1: $2: $want"
	else
		fail "$1: $2: got '$got', want '$want'"
	fi
}

# files in a scratch directory, to complete names against
mkdir -p "$WORK/dir/sub1" "$WORK/dir/sub2"
touch "$WORK/dir/file1" "$WORK/dir/key"

# --- bash ---------------------------------------------------------------
# bash_complete WORD...: the words of the command line, the last one being
# completed; prints COMPREPLY one per line (in a child bash, so that the
# completion function runs as it would in an interactive shell)
bash_complete() {
	bash -c '
		source "$1"; shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		_rdmcp rdmcp "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$BASH_COMP" "$@"
}

# expect_common SHELL COMPLETE_FN: what both completions must offer alike:
# an abbreviated option, directories only where a directory is wanted,
# files, and hosts for the last argument
expect_common() {
	local sh=$1 fn=$2
	expect "$sh" "--ret" "$("$fn" rdmcp --ret)" "--retries"
	expect "$sh" "-d (directories only)" "$("$fn" rdmcp -d "$WORK/dir/")" \
		"$WORK/dir/sub1 $WORK/dir/sub2"
	expect "$sh" "--root (directories only)" \
		"$("$fn" rdmcp --serve --root "$WORK/dir/s")" \
		"$WORK/dir/sub1 $WORK/dir/sub2"
	expect "$sh" "--key (files)" "$("$fn" rdmcp --key "$WORK/dir/k")" \
		"$WORK/dir/key"
	expect "$sh" "FILE after -f" \
		"$("$fn" rdmcp -f hosts "$WORK/dir/fi")" "$WORK/dir/file1"
	expect "$sh" "FILE after -w" \
		"$("$fn" rdmcp -w node1 "$WORK/dir/fi")" "$WORK/dir/file1"
	expect "$sh" "no host as an argument after -w" \
		"$(HOSTFILE=/etc/hosts "$fn" rdmcp -w node1 "$WORK/dir/file1" localh)" ""
	expect "$sh" "a host after -w" \
		"$(HOSTFILE=/etc/hosts "$fn" rdmcp -w localh)" "localhost"
	expect "$sh" "a host (from /etc/hosts)" \
		"$(HOSTFILE=/etc/hosts "$fn" rdmcp "$WORK/dir/file1" localh)" \
		"localhost"
}

if ! bash -n "$BASH_COMP"; then
	fail "bash -n $BASH_COMP"
else
	# with an empty PATH: the completion must not depend on an installed
	# rdmcp
	offered=$(PATH=/usr/bin:/bin bash_complete rdmcp -)
	check_set bash "$offered"
	expect bash "--algorithm" "$(bash_complete rdmcp --algorithm '')" \
		"binomial chain tree sequential"
	expect bash "-a b" "$(bash_complete rdmcp -a b)" "binomial"
	expect bash "--transport" "$(bash_complete rdmcp --transport '')" \
		"auto verbs tcp"
	# bash splits --transport=t at '=' (COMP_WORDBREAKS)
	expect bash "--transport=t" "$(bash_complete rdmcp --transport = t)" "tcp"
	expect_common bash bash_complete
	expect bash "-f (files)" "$(bash_complete rdmcp -f "$WORK/dir/fi")" \
		"$WORK/dir/file1"
	expect bash "--serve takes no arguments" \
		"$(bash_complete rdmcp --serve --root /tmp "$WORK/dir/fi")" ""
fi

# --- zsh ----------------------------------------------------------------
# zsh_complete WORD...: the matches zsh's completion system offers for the
# command line WORD... (completing at its end), without descriptions
zsh_complete() {
	zsh_raw "$@" | sed 's/ -- .*//; s/[[:space:]]*$//' |
		{ grep -v '^$' || true; } | sort -u
}

# zsh_raw WORD...: the harness's output, "match -- description"; a
# harness that fails or hangs (30 s) is a failure of its own
zsh_raw() {
	local rc=0
	timeout 30 zsh -f "$ZSH_HARNESS" "$TOP/completions" "$@" \
		>"$WORK/zsh.out" 2>"$WORK/zsh.err" || rc=$?
	if [ "$rc" -ne 0 ] || [ -s "$WORK/zsh.err" ]; then
		fail "zsh: completing '$*': harness status $rc: $(cat "$WORK/zsh.err")"
	fi
	cat "$WORK/zsh.out"
}

if ! command -v zsh >/dev/null 2>&1; then
	fail "zsh is not installed (scripts/install-deps.sh installs it)"
elif ! zsh -n "$ZSH_COMP"; then
	fail "zsh -n $ZSH_COMP"
elif ! zsh -f -c 'zmodload zsh/zpty' 2>/dev/null; then
	fail "zsh has no zsh/zpty module"
else
	ok "zsh -n $ZSH_COMP: no syntax errors"
	offered=$(PATH=/usr/bin:/bin zsh_complete rdmcp -)
	check_set zsh "$offered"
	# every option has a description
	undescribed=$(zsh_raw rdmcp - | { grep -E '^-' || true; } |
		{ grep -v ' -- .' || true; } | tr '\n' ' ')
	[ -z "$undescribed" ] || fail "zsh: options without a description: $undescribed"
	expect zsh "--algorithm" "$(zsh_complete rdmcp --algorithm '')" \
		"binomial chain tree sequential"
	expect zsh "--transport=" "$(zsh_complete rdmcp --transport=)" \
		"--transport=auto --transport=verbs --transport=tcp"
	expect_common zsh zsh_complete
	expect zsh "--ok-file (files)" \
		"$(zsh_complete rdmcp --ok-file "$WORK/dir/fi")" "$WORK/dir/file1"
	expect zsh "no second --hostfile" \
		"$(zsh_complete rdmcp -f hosts --hostf)" ""
fi

# the harness must leave the machine as it found it: compinit once
# replaced /dev/null, as root, with its dump file
if [ "$devnull_was_device" = yes ] && [ ! -c /dev/null ]; then
	fail "/dev/null is no longer a character device (zsh's compinit wrote it?)"
elif [ "$devnull_was_device" = no ]; then
	echo "completions: warning: /dev/null was not a character device before these tests" >&2
fi

if [ "$failures" -gt 0 ]; then
	echo "completions: $failures check(s) failed" >&2
	exit 1
fi
echo "completions: all completion checks passed"
