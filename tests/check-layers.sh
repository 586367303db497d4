#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check-layers.sh [TOP] - the code keeps to its layers ('make check-layers';
# check-docs.sh runs it too).
#
# The layers are the folders of src/ (and cmd/), and the rule of each
# folder is written once, in the table of docs/architecture.md between the
# "layers: begin" and "layers: end" markers: per row, a folder, the folders
# below src/ its files may include, then "pure" (no <uv.h>) or "rdma-core"
# (the only folder whose files may include <infiniband/...> or <rdma/...>).
# A file may include its own folder's headers, and util/log.h.  It fails
# if:
#   - a .c file lies directly in src/, or a folder has no row;
#   - an include is not one of our headers by its path below src/, or
#     reaches a folder its row does not name, or src/ includes cmd/;
#   - the table's folders include one another in a loop;
#   - a pure folder includes <uv.h>, a folder not marked rdma-core
#     includes rdma-core, or a file of cmd/ reaches rdma-core through the
#     headers it includes.
# TOP (default: this tree) is the tree to check, so that a copy with a bad
# include can show that the check fails.  Exits 0 only if all is well.
set -euo pipefail

TOP=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$TOP"
TABLE=docs/architecture.md
failures=0
fail() {
	echo "check-layers: FAIL: $*" >&2
	failures=$((failures + 1))
}

# --- the table ---------------------------------------------------------------
declare -A allowed note
rows=$(sed -n '/<!-- layers: begin -->/,/<!-- layers: end -->/p' "$TABLE" 2>/dev/null |
	grep '^|' | tail -n +3 || true)
[ -n "$rows" ] || { fail "no layers table in $TABLE"; exit 1; }
while IFS='|' read -r _ folder deps extra _; do
	folder=$(echo "$folder" | tr -d '` ')
	folder=${folder#src/}
	allowed[$folder]=" $(echo $deps) "
	note[$folder]=$(echo $extra)
done <<<"$rows"

# the folders include one another in no loop: tsort says so
edges=$(for f in "${!allowed[@]}"; do
	for d in ${allowed[$f]}; do echo "$f $d"; done
	echo "$f $f"
done)
if ! echo "$edges" | tsort >/dev/null 2>"$TOP/.tsort.err"; then
	fail "the folders of $TABLE include one another in a loop: $(head -3 "$TOP/.tsort.err" | tr '\n' ' ')"
fi
rm -f "$TOP/.tsort.err"

# folder FILE: its layer ("cmd", or its folder below src/)
folder() {
	case $1 in
	cmd/*) echo cmd ;;
	*) dirname "${1#src/}" ;;
	esac
}

# resolve FILE HEADER: the file a quoted include names: below src/ (the
# build's -Isrc), or next to FILE (cmd/'s own headers); nothing if none
resolve() {
	if [ -e "src/$2" ]; then
		echo "src/$2"
	elif [ -e "$(dirname "$1")/$2" ]; then
		echo "$(dirname "$1")/$2"
	fi
}

includes() {
	sed -n 's/^#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

# --- every file, every edge --------------------------------------------------
for f in src/*.c src/*.h; do
	[ -e "$f" ] && fail "$f lies directly in src/: it belongs in its layer's folder"
done
files=$(find src cmd -name '*.[ch]' | sort)
count=0
for f in $files; do
	m=$(folder "$f")
	if [ -z "${allowed[$m]+x}" ]; then
		fail "$f: folder '$m' has no row in the layers table of $TABLE"
		continue
	fi
	for h in $(includes "$f"); do
		count=$((count + 1))
		path=$(resolve "$f" "$h")
		case $path in
		"") fail "$f includes \"$h\": none of our headers (name it by its path below src/)"; continue ;;
		cmd/*) [ "$m" = cmd ] && continue
		       fail "$f includes $path: nothing under src/ includes cmd/"; continue ;;
		esac
		t=$(dirname "${path#src/}")
		[ "$t" = "$m" ] || [ "$h" = util/log.h ] && continue
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
		fail "$f includes rdma-core, but only a folder marked rdma-core may"
	fi
done

# --- cmd/ sees no rdma-core, even through our headers -----------------------
# reaches FILE: every header FILE includes, directly or not
declare -A seen
reaches() {
	local h p
	for h in $(includes "$1"); do
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
	echo "check-layers: $failures problem(s): the code breaks the layers of $TABLE" >&2
	exit 1
fi
echo "check-layers: ok: $count includes in $(echo $files | wc -w) files keep to the ${#allowed[@]} folders of $TABLE"
