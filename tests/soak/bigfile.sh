# SPDX-License-Identifier: MIT
# A sparse file over 4 GiB (sizes and offsets beyond 32 bits, more than
# 65535 blocks of 64 KiB) reaches two hosts intact.
. "$(dirname "$0")/../lib.sh"
start_daemons 2
src=$WORK/src
mkdir -p "$src"
prepare_dirs 2 "$src"
size=$(( (4 << 30) + 4097 ))
truncate -s "$size" "$src/big"
# non-zero bytes at the start, around 4 GiB and at the very end
for off in 0 $(( (4 << 30) - 7 )) $(( size - 100 )); do
	head -c 100 /dev/urandom | dd of="$src/big" bs=1 seek="$off" \
		conv=notrunc status=none
done
expect_status 0 "$RDMCP" -b 64K --verify "$src/big" "$(hosts 2)"
for i in 1 2; do
	[ "$(stat -c %s "$(landed "$i" "$src/big")")" -eq "$size" ] ||
		fail "host $i: wrong size"
done
cmp "$src/big" "$(landed 2 "$src/big")" || fail "host 2 differs"
rm -f "$WORK"/h*"$src"/big "$src/big"
