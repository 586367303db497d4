# SPDX-License-Identifier: MIT
# median(LIST): the median of the numbers in a space-separated string,
# "NA" when it holds none.  Shared by the benches' awk programs: pasted
# in front of them ("$(cat bench/median.awk)"), as mawk has no -e.
function median(list,    v, n, i, j, x) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
		}
	if (n == 0)
		return "NA"
	return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
