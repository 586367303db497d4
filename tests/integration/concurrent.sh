# One daemon serves several transfers at the same time, from different
# senders, and keeps serving afterwards.
. "$(dirname "$0")/../lib.sh"
start_daemons 5
src=$WORK/src
mkdir -p "$src"
prepare_dirs 5 "$src"
pids=()
for j in 1 2 3 4; do
	make_file "$src/f$j" $(( (j * 3) << 20 ))
	"$RDMCP" -b 256K -a "$(echo binomial chain tree sequential | cut -d' ' -f$j)" \
		"$src/f$j" "$(hosts 5)" >"$WORK/out$j" 2>&1 &
	pids+=($!)
done
for j in 1 2 3 4; do
	wait "${pids[$((j - 1))]}" || fail "transfer $j: $(cat "$WORK/out$j")"
	assert_copies 5 "$src/f$j"
done
expect_status 0 "$RDMCP" --force "$src/f1" "$(hosts 5)"
assert_no_temporaries
