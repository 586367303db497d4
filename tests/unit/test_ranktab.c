/* SPDX-License-Identifier: MIT */
/*
 * ranktab: items stay sorted by key whatever the insertion order, a key
 * is held once, lookups find exactly what was added, removal keeps the
 * order.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "unit.h"
#include "transport/ranktab.h"

START_TEST(sorted_unique_found)
{
	static const uint32_t order[] = { 7, 2, 9, 0, 5, 100, 3, 8, 1, 4, 6 };
	struct ranktab t = { 0 };
	int items[101];
	size_t i;

	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		ck_assert_int_eq(rt_add(&t, order[i], &items[order[i]]), 0);
	ck_assert_int_eq(rt_add(&t, 5, &items[5]), -EEXIST);
	ck_assert_uint_eq(t.n, 11);
	for (i = 1; i < t.n; i++)
		ck_assert_uint_lt(t.e[i - 1].key, t.e[i].key);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		ck_assert_ptr_eq(rt_find(&t, order[i]), &items[order[i]]);
	ck_assert_ptr_null(rt_find(&t, 10));
	ck_assert_ptr_null(rt_find(&t, 101));
	ck_assert_ptr_eq(rt_at(&t, 0), &items[0]);
	ck_assert_ptr_eq(rt_at(&t, 10), &items[100]);
	/* taken out: gone, the rest in order */
	ck_assert_ptr_eq(rt_remove(&t, 5), &items[5]);
	ck_assert_ptr_null(rt_remove(&t, 5));
	ck_assert_ptr_null(rt_find(&t, 5));
	ck_assert_uint_eq(t.n, 10);
	for (i = 1; i < t.n; i++)
		ck_assert_uint_lt(t.e[i - 1].key, t.e[i].key);
	ck_assert_ptr_eq(rt_find(&t, 6), &items[6]);
	/* 64-bit keys */
	ck_assert_int_eq(rt_add(&t, UINT64_MAX, &items[1]), 0);
	ck_assert_ptr_eq(rt_find(&t, UINT64_MAX), &items[1]);
	ck_assert_ptr_eq(rt_at(&t, t.n - 1), &items[1]);
	rt_clear(&t);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_ptr_null(rt_find(&t, 7));
	rt_clear(&t);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("ranktab");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, sorted_unique_found);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
