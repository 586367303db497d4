# SPDX-License-Identifier: MIT
# Every algorithm delivers identical copies, with end-to-end --verify.
. "$(dirname "$0")/../lib.sh"
start_daemons 6
src=$WORK/src
mkdir -p "$src"
prepare_dirs 6 "$src"
make_file "$src/data" $((7 * 65536 + 99))
for alg in binomial chain tree sequential; do
	expect_status 0 "$RDMCP" --verify --force -a "$alg" -b 64K \
		"$src/data" "$(hosts 6)"
	assert_copies 6 "$src/data"
	grep -q "^6 of 6 replicas complete" "$WORK/out" ||
		fail "$alg: $(cat "$WORK/out")"
done
assert_no_temporaries
