/* SPDX-License-Identifier: MIT */
/*
 * Block sets: runs kept sorted and merged, unions of overlapping and
 * interleaved sets, the j-th block, coarsening to a bound of runs (always
 * a superset), and a wire form whose decoder refuses what bset_encode
 * never writes.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "unit.h"
#include "util/bset.h"

static struct bset *
make(const uint64_t (*runs)[2], size_t n)
{
	struct bset *s;

	ck_assert_int_eq(bset_new(&s), 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(bset_add(s, runs[i][0], runs[i][1]), 0);
	return s;
}

START_TEST(adds_merge_and_order)
{
	struct bset *s;

	ck_assert_int_eq(bset_new(&s), 0);
	ck_assert_int_eq(bset_add(s, 10, 5), 0);
	ck_assert_int_eq(bset_add(s, 15, 2), 0);	/* adjacent: merged */
	ck_assert_int_eq(bset_add(s, 20, 0), 0);	/* empty: nothing */
	ck_assert_int_eq(bset_add(s, 30, 1), 0);
	ck_assert_int_eq(bset_add(s, 16, 1), -EINVAL);	/* out of order */
	ck_assert_int_eq(bset_add(s, UINT64_MAX, 2), -EINVAL);
	ck_assert_uint_eq(bset_nruns(s), 2);
	ck_assert_uint_eq(bset_count(s), 8);
	ck_assert(bset_has(s, 10) && bset_has(s, 16) && bset_has(s, 30));
	ck_assert(!bset_has(s, 9) && !bset_has(s, 17) && !bset_has(s, 31));
	ck_assert_uint_eq(bset_nth(s, 0), 10);
	ck_assert_uint_eq(bset_nth(s, 6), 16);
	ck_assert_uint_eq(bset_nth(s, 7), 30);
	ck_assert_uint_eq(bset_nth(s, 8), UINT64_MAX);
	bset_free(s);
	bset_free(NULL);
}
END_TEST

START_TEST(union_of_overlaps)
{
	static const uint64_t a_runs[][2] = { { 0, 4 }, { 10, 10 }, { 40, 1 } };
	static const uint64_t b_runs[][2] = { { 2, 3 }, { 5, 5 }, { 12, 2 },
					      { 19, 3 }, { 50, 2 } };
	struct bset *a = make(a_runs, 3), *b = make(b_runs, 5), *u;

	ck_assert_int_eq(bset_union(a, b, &u), 0);
	/* 0..9 (0-3, 2-4, 5-9 touch), 10..21, 40, 50..51 */
	ck_assert_uint_eq(bset_nruns(u), 3);
	ck_assert_uint_eq(bset_run_at(u, 0).first, 0);
	ck_assert_uint_eq(bset_run_at(u, 0).count, 22);
	ck_assert_uint_eq(bset_run_at(u, 1).first, 40);
	ck_assert_uint_eq(bset_run_at(u, 2).first, 50);
	ck_assert_uint_eq(bset_count(u), 22 + 1 + 2);
	for (uint64_t blk = 0; blk < 60; blk++)
		ck_assert(bset_has(u, blk) == (bset_has(a, blk) || bset_has(b, blk)));
	ck_assert(bset_covers(u, a) && bset_covers(u, b) && bset_covers(u, u));
	ck_assert(bset_covers_range(u, 3, 19) && bset_covers_range(u, 40, 1));
	ck_assert(!bset_covers_range(u, 20, 3) && !bset_covers_range(u, 39, 2));
	ck_assert(bset_covers_range(u, 30, 0));
	ck_assert(!bset_covers(a, u) && !bset_covers(b, a));
	bset_free(u);
	bset_free(a);
	bset_free(b);
}
END_TEST

START_TEST(coarsen_fills_smallest_gaps)
{
	static const uint64_t runs[][2] = { { 0, 1 }, { 3, 1 }, { 100, 1 },
					    { 102, 1 }, { 1000, 1 } };
	struct bset *s = make(runs, 5), *orig = make(runs, 5);

	bset_coarsen(s, 3);	/* gaps 2, 96, 1, 897: fill the 1 and 2 */
	ck_assert_uint_eq(bset_nruns(s), 3);
	ck_assert_uint_eq(bset_run_at(s, 0).count, 4);
	ck_assert_uint_eq(bset_run_at(s, 1).first, 100);
	ck_assert_uint_eq(bset_run_at(s, 1).count, 3);
	ck_assert_uint_eq(bset_count(s), 8);
	ck_assert_uint_eq(bset_nth(s, 7), 1000);
	for (uint64_t blk = 0; blk < 1100; blk++)
		ck_assert(!bset_has(orig, blk) || bset_has(s, blk));
	bset_coarsen(s, 1);
	ck_assert_uint_eq(bset_nruns(s), 1);
	ck_assert_uint_eq(bset_count(s), 1001);
	bset_free(s);
	bset_free(orig);
}
END_TEST

START_TEST(coarsen_equal_gaps)
{
	static const uint64_t runs[][2] = { { 0, 1 }, { 2, 1 }, { 4, 1 },
					    { 6, 1 } };
	struct bset *s = make(runs, 4);

	bset_coarsen(s, 2);	/* three gaps of 1: exactly two filled */
	ck_assert_uint_eq(bset_nruns(s), 2);
	bset_free(s);
}
END_TEST

START_TEST(wire_round_trip_and_hostile)
{
	static const uint64_t runs[][2] = { { 1, 2 }, { 7, 3 } };
	struct bset *s = make(runs, 2), *back = NULL;
	struct wbuf w;
	struct rbuf r;

	wbuf_init(&w);
	bset_encode(s, &w);
	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(bset_decode(&r, 8, 10, &back), 0);
	ck_assert_uint_eq(bset_count(back), 5);
	ck_assert_uint_eq(bset_nth(back, 4), 9);
	bset_free(back);
	rbuf_init(&r, w.data, w.len);	/* past the limit */
	ck_assert_int_eq(bset_decode(&r, 8, 9, &back), -EBADMSG);
	rbuf_init(&r, w.data, w.len);	/* too many runs */
	ck_assert_int_eq(bset_decode(&r, 1, 10, &back), -EBADMSG);
	rbuf_init(&r, w.data, w.len - 1);	/* short */
	ck_assert_int_eq(bset_decode(&r, 8, 10, &back), -EBADMSG);
	w.data[4 + 16 + 7] = 3;	/* second run starts at 3: touches 1..2 */
	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(bset_decode(&r, 8, 10, &back), -EBADMSG);
	w.data[4 + 16 + 7] = 7;
	w.data[4 + 16 + 8 + 7] = 0;	/* an empty run */
	rbuf_init(&r, w.data, w.len);
	ck_assert_int_eq(bset_decode(&r, 8, 10, &back), -EBADMSG);
	wbuf_free(&w);
	bset_free(s);
}
END_TEST

int
main(void)
{
	Suite *s = suite_create("bset");
	TCase *tc = tcase_create("bset");

	tcase_add_test(tc, adds_merge_and_order);
	tcase_add_test(tc, union_of_overlaps);
	tcase_add_test(tc, coarsen_fills_smallest_gaps);
	tcase_add_test(tc, coarsen_equal_gaps);
	tcase_add_test(tc, wire_round_trip_and_hostile);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
