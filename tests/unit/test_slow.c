/* SPDX-License-Identifier: MIT */
/*
 * Slow members: a member whose blocks take SLOW_FACTOR times the group's
 * median, clear of the others' times by SLOW_GAP, is slow, but only when
 * starting again pays; in a chain the member after a slow one may be slow,
 * and a slow one's link is busy; one fed half its blocks by a slower one
 * may be slow; nothing is
 * judged before every member's time is known.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "unit.h"
#include "send/slow.h"

#define N 8

/* Eight members 0.4 s into a push of 512 blocks, blocks at 5 ms each
 * but member 4's at 20 ms (it has taken 20 blocks, the others 24). */
static uint64_t bt[N], held[N];
static double pace[N];	/* blocks a second: in a chain, those before a
			 * slow one run ahead at 200, it goes at 50 */

static struct slow_group
group(void)
{
	size_t i;

	for (i = 0; i < N; i++) {
		bt[i] = 5000;
		held[i] = 24;
		pace[i] = 200;
	}
	bt[4] = 20000;
	held[4] = 20;
	return (struct slow_group){
		.n = N, .block_us = bt, .held = held, .pace = pace,
		.blocks = 512, .restart_us = 30000,
	};
}

/* Member i of a chain slow: it and those after it at its pace. */
static void
chain_slow_from(size_t i)
{
	for (; i < N; i++)
		pace[i] = 50;
}

START_TEST(one_slow)
{
	struct slow_group g = group();
	enum slow_verdict v[N];
	uint64_t median;
	size_t i;

	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	ck_assert_uint_eq(median, 5000);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(v[i], i == 4 ? SLOW_YES : SLOW_NO);
	/* just under the factor: not slow */
	bt[4] = (uint64_t)(5000 * SLOW_FACTOR) - 1;
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_int_eq(v[4], SLOW_NO);
}
END_TEST

START_TEST(not_yet_known)
{
	struct slow_group g = group();
	enum slow_verdict v[N];
	uint64_t median = 1;

	bt[2] = 0;
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_uint_eq(median, 0);
	ck_assert_int_eq(v[4], SLOW_NO);
	/* a pace not known yet (one report so far) */
	bt[2] = 5000;
	pace[6] = 0;
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_int_eq(v[4], SLOW_NO);
	pace[6] = 200;
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	/* a member holding fewer than SLOW_MIN_HELD blocks */
	held[3] = SLOW_MIN_HELD - 1;
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	held[3] = SLOW_MIN_HELD;
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	g.n = 0;
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
}
END_TEST

/* Times spread over a range, as a link that bursts above its rate
 * gives: nobody is slow.  Bunched: the slowest is, if it stands clear of
 * the others' top by SLOW_GAP. */
START_TEST(spread_or_bunched)
{
	struct slow_group g = group();
	enum slow_verdict v[N];
	uint64_t median;
	const uint64_t spread[N] = { 200, 300, 400, 1300, 1500, 2500, 3000,
				     48000 };
	const uint64_t bunched[N] = { 4200, 4300, 4400, 4800, 5000, 5200,
				      5900, 19000 };
	size_t i;

	for (i = 0; i < N; i++)
		bt[i] = spread[i];
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_uint_eq(median, 1500);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(v[i], SLOW_NO);
	for (i = 0; i < N; i++)
		bt[i] = bunched[i];
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	ck_assert_int_eq(v[7], SLOW_YES);
	ck_assert_int_eq(v[6], SLOW_NO);
	bt[6] = 8400;	/* the others' top twice the fastest: bunched */
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	bt[7] = 16799;	/* not clear of 8.4 ms by SLOW_GAP */
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_int_eq(v[7], SLOW_MAYBE);
	bt[7] = 16800;
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	bt[6] = 8401;	/* spread */
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_int_eq(v[7], SLOW_NO);
}
END_TEST

/* Near the end, going on costs less than starting again. */
START_TEST(not_worth_it)
{
	struct slow_group g = group();
	enum slow_verdict v[N];
	uint64_t median;
	size_t i;

	for (i = 0; i < N; i++)
		held[i] = 500;
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	/* a restart that costs more than the rest of the push */
	g = group();
	g.restart_us = 20000000;
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	g.restart_us = 30000;
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
}
END_TEST

/* In a chain the members after a slow one take everything through the
 * slow one's link: they may be slow, and with relays that pass blocks on
 * as they land, all of them inherit its time and count as held back.
 * Slow ones already at the tail hold nobody back. */
START_TEST(chain)
{
	struct slow_group g = group();
	enum slow_verdict v[N];
	uint64_t median;
	size_t i;

	g.chain = true;
	bt[5] = 20000;
	held[5] = 20;
	chain_slow_from(4);
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(v[i], i == 4 ? SLOW_YES : i == 5 ? SLOW_MAYBE
						: SLOW_NO);
	/* member 4 slow and, as relays pass blocks on as they land, every
	 * member behind it as slow: they inherit its time (their own links
	 * cannot be seen), are left out of the typical time, may be slow,
	 * and are held back by it: starting again with it last pays */
	g = group();
	g.chain = true;
	for (i = 5; i < N; i++) {
		bt[i] = 21000;
		held[i] = 20;
	}
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	ck_assert_uint_eq(median, 5000);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(v[i], i == 4 ? SLOW_YES : i > 4 ? SLOW_MAYBE
						: SLOW_NO);
	/* so with member 1 slow, six behind it (a chain's usual case) */
	g = group();
	g.chain = true;
	bt[4] = 5000;
	for (i = 1; i < N; i++)
		bt[i] = 20000;
	chain_slow_from(1);
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	ck_assert_uint_eq(median, 5000);
	ck_assert_int_eq(v[1], SLOW_YES);
	/* members 6 and 7 slow too, 7 slower still (its own link shows
	 * through): every slow one at the tail already */
	g = group();
	g.chain = true;
	bt[4] = 5000;
	held[4] = 24;
	bt[6] = 20000;
	bt[7] = 50000;
	held[6] = held[7] = 20;
	chain_slow_from(6);
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_int_eq(v[6], SLOW_YES);
	ck_assert_int_eq(v[7], SLOW_MAYBE);
	/* 5, 6, 7 slow, each slower than the one before: no fast member
	 * waits behind them */
	bt[5] = 20000;
	bt[6] = 50000;
	bt[7] = 125000;
	held[5] = 20;
	chain_slow_from(5);
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_int_eq(v[5], SLOW_YES);
	ck_assert_int_eq(v[6], SLOW_MAYBE);
	ck_assert_int_eq(v[7], SLOW_MAYBE);
	bt[5] = 5000;
	held[5] = 24;
	/* the head of a chain: busy whether its link or the sender's is
	 * the slower, so it may be slow, never slow; in the binomial
	 * pipeline it is */
	g = group();
	g.chain = g.head = true;
	bt[4] = 5000;
	held[4] = 24;
	bt[0] = 20000;
	held[0] = 20;
	chain_slow_from(0);
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_int_eq(v[0], SLOW_MAYBE);
	/* the first one running after a head that is done: slow */
	g.head = false;
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	ck_assert_int_eq(v[0], SLOW_YES);
	g.chain = false;
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	ck_assert_int_eq(v[0], SLOW_YES);
	/* slow blocks on a link that idles between them: what feeds it is
	 * slow, not it (links that pass bursts faster than their rate: a
	 * member that gets blocks back to back sees the rate, the others a
	 * burst); busy two thirds of the time, it is slow */
	for (i = 0; i < 2; i++) {
		g = group();
		g.chain = i == 0;
		pace[4] = 33;	/* 33 x 20 ms: 0.66 s of every second */
		ck_assert_int_eq(slow_find(&g, v, &median), 0);
		ck_assert_int_eq(v[4], SLOW_MAYBE);
		pace[4] = 34;
		ck_assert_int_eq(slow_find(&g, v, &median), 1);
		ck_assert_int_eq(v[4], SLOW_YES);
	}
	/* two slow ones apart, each making the one after it look slow:
	 * both found (the typical time is the lower quartile) */
	g = group();
	g.chain = true;
	for (i = 0; i < N; i++)
		if (i == 1 || i == 2 || i == 4 || i == 5) {
			bt[i] = 20000;
			held[i] = 20;
		}
	chain_slow_from(1);
	ck_assert_int_eq(slow_find(&g, v, &median), 2);
	ck_assert_uint_eq(median, 5000);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(v[i], i == 1 || i == 4 ? SLOW_YES :
				       i == 2 || i == 5 ? SLOW_MAYBE : SLOW_NO);
	/* back to 6 and 7 slow, 4 and 5 not */
	g = group();
	g.chain = true;
	bt[6] = bt[7] = 20000;
	held[6] = held[7] = 20;
	bt[4] = 5000;
	held[4] = 24;
	/* the same in a binomial pipeline, where everyone relays */
	g.chain = false;
	ck_assert_int_eq(slow_find(&g, v, &median), 2);
	ck_assert_int_eq(v[7], SLOW_YES);
}
END_TEST

/* Half of the group slow: the median is theirs; nobody stands out. */
START_TEST(half_slow)
{
	struct slow_group g = group();
	enum slow_verdict v[N];
	uint64_t median;
	size_t i;

	for (i = 0; i < N / 2 + 1; i++) {
		bt[i] = 20000;
		held[i] = 20;
	}
	ck_assert_int_eq(slow_find(&g, v, &median), 0);
	ck_assert_uint_eq(median, 20000);
}
END_TEST

/* In the binomial pipeline a member that gets half its blocks from a
 * slow one looks slow too (those blocks come at the slow one's pace): it
 * may be slow, it is not called slow; the one feeding it still is, even
 * though it feeds the slow one in turn. */
START_TEST(fed_by_slower)
{
	struct slow_group g = group();
	size_t feeder[N], i;
	enum slow_verdict v[N];
	uint64_t median;

	bt[6] = 13000;
	ck_assert_int_eq(slow_find(&g, v, &median), 2);
	ck_assert_int_eq(v[6], SLOW_YES);
	for (i = 0; i < N; i++)
		feeder[i] = SLOW_NO_FEEDER;
	feeder[6] = 4;
	feeder[4] = 6;
	g.feeder = feeder;
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	ck_assert_int_eq(v[4], SLOW_YES);
	ck_assert_int_eq(v[6], SLOW_MAYBE);
	for (i = 0; i < N; i++)
		if (i != 4 && i != 6)
			ck_assert_int_eq(v[i], SLOW_NO);
}
END_TEST

/* Sent again last: still slow if its copy took half as long again as
 * the others' last one; nothing to compare with keeps the verdict. */
START_TEST(confirm)
{
	ck_assert_int_eq(slow_confirm(11.6, 3.2), SLOW_YES);
	ck_assert_int_eq(slow_confirm(4.81, 3.2), SLOW_YES);
	ck_assert_int_eq(slow_confirm(4.7, 3.2), SLOW_NO);
	ck_assert_int_eq(slow_confirm(3.914, 3.915), SLOW_NO);
	ck_assert_int_eq(slow_confirm(3.9, 0), SLOW_YES);
}
END_TEST

/* A chain whose members before the slow one are done (they got every
 * block, at their link's rate): the slow one and those behind it, which
 * inherit its time, are all that still run and look alike; the done ones'
 * times, given with them, say which is slow.  Done ones are judged no
 * further, and their pace need not be known. */
START_TEST(chain_done_before_slow)
{
	struct slow_group g = group(), running;
	enum slow_verdict v[N];
	bool done[N] = { true, false };
	uint64_t median;
	size_t i;

	g.chain = true;
	for (i = 1; i < N; i++) {
		bt[i] = 20000 + 100 * i;
		held[i] = 20;
	}
	held[0] = 512;
	pace[0] = 0;
	chain_slow_from(1);
	/* the running ones alone (those arrays from member 1 on): all
	 * alike */
	running = g;
	running.n = N - 1;
	running.block_us = bt + 1;
	running.held = held + 1;
	running.pace = pace + 1;
	ck_assert_int_eq(slow_find(&running, v, &median), 0);
	g.done = done;
	ck_assert_int_eq(slow_find(&g, v, &median), 1);
	ck_assert_uint_eq(median, 5000);
	for (i = 0; i < N; i++)
		ck_assert_int_eq(v[i], i == 1 ? SLOW_YES : i == 0 ? SLOW_NO
						: SLOW_MAYBE);
}
END_TEST

static Suite *
slow_suite(void)
{
	Suite *s = suite_create("slow");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, one_slow);
	tcase_add_test(tc, not_yet_known);
	tcase_add_test(tc, spread_or_bunched);
	tcase_add_test(tc, not_worth_it);
	tcase_add_test(tc, chain);
	tcase_add_test(tc, chain_done_before_slow);
	tcase_add_test(tc, half_slow);
	tcase_add_test(tc, fed_by_slower);
	tcase_add_test(tc, confirm);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(slow_suite());
}
