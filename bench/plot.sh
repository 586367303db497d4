#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/plot.sh TSV OUT - plot a run of bench/cluster.sh (what 'make
# bench' writes to BENCH_OUT): for each tool, the time to the last replica
# divided by one plain TCP copy (y) against the group size N (x), medians
# of the runs; the dashed line at 1 is that copy, the physical limit.
# Scenarios are placed in order of N, each labelled with its NIC rate and
# file size (two scenarios may share an N).  OUT ends in .png or .svg.
# Needs gnuplot (Debian: gnuplot-nox, in scripts/install-deps.sh).
set -euo pipefail

TSV=${1:-}
OUT=${2:-}
if [ ! -f "$TSV" ] || [ -z "$OUT" ]; then
	echo "usage: bench/plot.sh TSV OUT.png|OUT.svg" >&2
	exit 2
fi
command -v gnuplot >/dev/null || { echo "bench/plot.sh: needs gnuplot" >&2; exit 2; }
case $OUT in
*.svg) TERM_SET="set terminal svg size 900,560 dynamic font 'sans,12'" ;;
*) TERM_SET="set terminal pngcairo size 900,560 font 'sans,10'" ;;
esac

DAT=$(mktemp "${TMPDIR:-/tmp}/bench-plot.XXXXXX")
trap 'rm -f "$DAT" "$DAT.gp"' EXIT

# DAT: a block per tool (tcpcopy left out: it is the 1; rdmcp-1to1 too:
# it goes to one host whatever N), one line per
# scenario: position, median ratio; then the tool names and the x labels.
# shellcheck disable=SC2016 # awk's $, not the shell's
awk -F '\t' '
function median(list,    v, n, i, j, x) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
		}
	return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
/^#/ { next }
{
	if (!($1 in seen)) { seen[$1] = 1; sc[++nsc] = $1; n[$1] = $2; lab[$1] = $2 "\\n" $3 ", " $4 " MiB" }
	if ($5 != "tcpcopy" && $5 != "rdmcp-1to1" && !($5 in tseen)) { tseen[$5] = 1; tool[++ntool] = $5 }
	if ($8 != "NA")
		r[$1 SUBSEP $5] = r[$1 SUBSEP $5] " " $8
}
END {
	# scenarios in order of N, stable
	for (i = 1; i <= nsc; i++)
		for (j = i; j > 1 && n[sc[j - 1]] + 0 > n[sc[j]] + 0; j--) {
			x = sc[j]; sc[j] = sc[j - 1]; sc[j - 1] = x
		}
	for (t = 1; t <= ntool; t++) {
		for (s = 1; s <= nsc; s++) {
			k = sc[s] SUBSEP tool[t]
			if (k in r) {
				m = median(r[k])
				print s, m
				if (m > max)
					max = m
			}
		}
		print "\n"
		names = names (t > 1 ? " " : "") tool[t]
	}
	for (s = 1; s <= nsc; s++)
		xt = xt (s > 1 ? ", " : "") "\"" lab[sc[s]] "\" " s
	printf "tools = \"%s\"\nntools = %d\nnsc = %d\nset xtics (%s)\nmax = %g\n",
		names, ntool, nsc, xt, max >"/dev/stderr"
}' "$TSV" >"$DAT" 2>"$DAT.gp"

when=$(sed -n 's/^# rdmcp bench \([^,]*\),.*/\1/p' "$TSV" | head -1)
runs=$(sed -n 's/^# runs \([0-9]*\),.*/\1/p' "$TSV" | head -1)
cat >>"$DAT.gp" <<EOF
$TERM_SET
set output '$OUT'
set title "rdmcp bench${when:+, $when}: time to the last replica / one plain TCP copy\\n(runs: ${runs:-?}, medians; lower is better; 1 = one copy to one host)"
set xlabel "N: hosts, sender included (every NIC's rate, file size)"
set ylabel "time / one TCP copy"
set xrange [0.5:nsc + 0.5]
set bmargin 5
set xlabel offset 0,-1
if (max > 4) { set logscale y 2; set yrange [0.8:*]; set ytics add (1.25, 1.5, 3, 6, 12, 24, 48) } else { set yrange [0.9:*] }
set grid ytics
set key top left
set pointsize 1.2
plot for [i = 0:ntools - 1] '$DAT' index i using 1:2 with linespoints lw 2 title word(tools, i + 1), \
	1 with lines dt 2 lc 'black' title 'tcpcopy (1 host)'
EOF
gnuplot "$DAT.gp"
