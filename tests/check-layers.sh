#!/usr/bin/env bash
# check-layers.sh [TOP] - the code keeps to the layers that README.md's
# Architecture section draws ('make check-layers'; check-docs.sh runs it).
#
# The allowed include edges are written once, in README.md, in the table
# between the "layers: begin" and "layers: end" markers: per row, modules
# (a module is NAME.c and NAME.h; `cmd/*` is everything under cmd/), then
# the modules they may include, then "pure" (no <uv.h>) or "rdma-core"
# (the only ones that may include <infiniband/...> or <rdma/...>).  Any
# file may include its own module's header and log.h; cmd/ its own
# headers.  Every #include of src/*.[ch] and cmd/*.[ch] is checked, and
# fails the check if:
#   - its module is not in the table, or the edge is not in its row;
#   - a file under src/ includes a header of cmd/ (or one that is not
#     ours);
#   - a pure module includes <uv.h>, a module not marked rdma-core
#     includes rdma-core;
#   - a file of cmd/ reaches rdma-core through the headers it includes.
# TOP (default: this tree) is the tree to check, so that a copy with a bad
# include can show that the check fails.  Exits 0 only if all is well.
set -euo pipefail

TOP=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$TOP"
README=README.md
failures=0
fail() {
	echo "check-layers: FAIL: $*" >&2
	failures=$((failures + 1))
}

# --- the table ------------------------------------------------------------
declare -A allowed note
table=$(sed -n '/<!-- layers: begin -->/,/<!-- layers: end -->/p' "$README" |
	grep '^|' | tail -n +3 || true)
[ -n "$table" ] || { fail "no layers table in $README"; exit 1; }
set -f	# `cmd/*` is a name here, not a pattern
while IFS='|' read -r _ mods deps extra _; do
	mods=$(echo "$mods" | tr -d '`')
	for m in $mods; do
		allowed[$m]=" $(echo $deps) "
		note[$m]=$(echo $extra)
	done
done <<<"$table"
set +f

# module FILE: the module a file belongs to
module() {
	case $1 in
	cmd/*) echo 'cmd/*' ;;
	*) basename "${1%.*}" ;;
	esac
}

# resolve FILE HEADER: the path of a quoted include, as the build finds
# it (cmd/ is compiled with -Isrc); for src/, a header of cmd/ is named
# too (to be refused); nothing if it is none of ours
resolve() {
	local dir
	dir=$(dirname "$1")
	if [ -e "$dir/$2" ]; then
		echo "$dir/$2"
	elif [ "$dir" = cmd ] && [ -e "src/$2" ]; then
		echo "src/$2"
	elif [ "$dir" = src ] && [ -e "cmd/$2" ]; then
		echo "cmd/$2"
	fi
}

# --- every edge -------------------------------------------------------------
files=$(ls src/*.c src/*.h cmd/*.c cmd/*.h)
edges=0
for f in $files; do
	m=$(module "$f")
	if [ -z "${allowed[$m]+x}" ]; then
		fail "$f: module '$m' is not in the layers table of $README"
		continue
	fi
	for h in $(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		edges=$((edges + 1))
		path=$(resolve "$f" "$h")
		case $path in
		"") fail "$f includes \"$h\": none of our headers"; continue ;;
		cmd/*) [ "$m" = 'cmd/*' ] && continue
		       fail "$f includes $path: nothing under src/ includes cmd/"; continue ;;
		esac
		t=$(basename "${path%.h}")
		[ "$t" = "$m" ] || [ "$t" = log ] && continue
		case ${allowed[$m]} in
		*" $t "*) ;;
		*) fail "$f includes \"$h\": $m may not use $t (its row: ${allowed[$m]# })" ;;
		esac
	done
	if grep -q '^#[[:space:]]*include[[:space:]]*<uv\.h>' "$f" &&
	   [ "${note[$m]}" = pure ]; then
		fail "$f includes <uv.h>, but $m is pure"
	fi
	if grep -Eq '^#[[:space:]]*include[[:space:]]*<(infiniband|rdma)/' "$f" &&
	   [ "${note[$m]}" != rdma-core ]; then
		fail "$f includes rdma-core, but only the rdma-core module may"
	fi
done

# --- cmd/ sees no rdma-core, even through our headers -----------------------
# reaches FILE: every header FILE includes, directly or not
declare -A seen
reaches() {
	local h p
	for h in $(sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"); do
		p=$(resolve "$1" "$h")
		[ -n "$p" ] && [ -z "${seen[$p]+x}" ] || continue
		seen[$p]=1
		echo "$p"
		reaches "$p"
	done
}
for f in cmd/*.c; do
	seen=()
	for p in $(reaches "$f"); do
		if grep -Eq '^#[[:space:]]*include[[:space:]]*<(infiniband|rdma)/' "$p"; then
			fail "$f sees rdma-core through $p"
		fi
	done
done

if [ "$failures" -gt 0 ]; then
	echo "check-layers: $failures problem(s): the code breaks the layers of $README" >&2
	exit 1
fi
echo "check-layers: ok: $edges includes in $(echo $files | wc -w) files keep to the layers of $README"
