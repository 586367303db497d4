# SPDX-License-Identifier: MIT
# --trace puts every member's times on the sender's clock from the round
# trip of its JOB and ACCEPT, not from how long its timeline took to come:
# here the last host of a chain sends its timeline (thousands of spans)
# over an upload of 2 Mbit/s, a transit of most of a second, while the
# hosts share one clock.  Each member's label must say its times moved by
# a few milliseconds at most, with the error the round trip bounds; and
# the trace must still be whole.
. "$(dirname "$0")/../lib.sh"
need_root
cluster_up 3 1gbit
cluster_daemons 3
src=$WORK/src
mkdir -p "$src" "$WORK/h2$src" "$WORK/h3$src"
head -c $((1 << 20)) /dev/urandom >"$src/data"
# host 3's upload only: its downloads (the file) stay at 1 Gbit/s
on_host 3 tc qdisc replace dev eth0 root tbf rate 2mbit burst 32kb \
	latency 5s
trace=$WORK/trace.json
expect_status 0 on_host 1 "$RDMCP" -a chain -b 512 --trace "$trace" \
	"$src/data" "$(cluster_hosts 3)"
for i in 2 3; do
	cmp -s "$src/data" "$WORK/h$i$src/data" || fail "host $i: no copy"
done
jq -e . "$trace" >/dev/null || fail "not JSON: $(head -c 300 "$trace")"
spans=$(jq '[.traceEvents[] | select(.pid == 2 and .ph == "X")] | length' "$trace")
[ "$spans" -ge 2048 ] || fail "host 3 sent $spans spans: too few to be slow"
for pid in 1 2; do
	label=$(jq -r ".traceEvents[] | select(.pid == $pid and
		.name == \"process_labels\") | .args.labels" "$trace")
	[[ $label =~ ^times\ moved\ ([-+][0-9]+\.[0-9]{3})\ ms\ \(±\ ([0-9]+\.[0-9]{3})\ ms\)$ ]] ||
		fail "pid $pid: label '$label'"
	moved=${BASH_REMATCH[1]} err=${BASH_REMATCH[2]}
	awk -v m="$moved" -v e="$err" 'BEGIN { exit !(m < 5 && m > -5 && e < 5) }' ||
		fail "pid $pid: times moved $moved ms (± $err): one clock, so ~0"
	note "host $((pid + 1)): $label"
done
