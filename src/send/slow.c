/* SPDX-License-Identifier: MIT */
/*
 * slow - which members of a running group are much slower than the
 * others (see slow.h).
 */
#include "send/slow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Is member i done already (slow_group.done)? */
static bool
is_done(const struct slow_group *g, size_t i)
{
	return g->done != NULL && g->done[i];
}

/* The group's typical time: the median of the members' times, or in a
 * chain (where each slow member makes the one after it look slow too)
 * their lower quartile, leaving out those that inherit (inh[i]:
 * find_inheritors); 0 while a member's time is not known; -ENOMEM. */
static int
typical_time(const struct slow_group *g, const bool *inh, uint64_t *median)
{
	uint64_t *c = malloc(g->n * sizeof(*c));
	size_t i, n = 0;

	if (c == NULL)
		return -ENOMEM;
	*median = 0;
	for (i = 0; i < g->n && g->block_us[i] > 0; i++)
		if (!inh[i])
			c[n++] = g->block_us[i];
	if (i == g->n && n > 0) {
		qsort(c, n, sizeof(*c), cmp_u64);
		*median = c[g->chain ? n / 4 : n / 2];
	}
	free(c);
	return 0;
}

/* The slowest block time under SLOW_FACTOR times the median (the top of
 * the others' range, which slow members must stand clear of), if the
 * others' times bunch within SLOW_BUNCH of the fastest; 0 if not. */
static uint64_t
others_top(const struct slow_group *g, uint64_t median)
{
	uint64_t top = 0, fastest = UINT64_MAX;
	size_t i;

	for (i = 0; i < g->n; i++) {
		if (g->block_us[i] < fastest)
			fastest = g->block_us[i];
		if ((double)g->block_us[i] < SLOW_FACTOR * (double)median &&
		    g->block_us[i] > top)
			top = g->block_us[i];
	}
	return (double)top <= SLOW_BUNCH * (double)fastest ? top : 0;
}

/* Is member i's link busy: does it take blocks at least 1/SLOW_BUSY as
 * fast as its block time says its link passes them? */
static bool
busy(const struct slow_group *g, size_t i)
{
	return g->pace[i] * (double)g->block_us[i] * SLOW_BUSY >= 1e6;
}

/* In a chain, does member i get its blocks through a link that may be
 * what holds it back: the sender's (the head's) or that of the member
 * before it, whose blocks are slow too? */
static bool
fed_through_slow(const struct slow_group *g, const enum slow_verdict *v,
		 size_t i)
{
	return g->chain && (i == 0 ? g->head : v[i - 1] != SLOW_NO);
}

/* Is member i fed half its blocks or more by a member whose blocks are
 * slower still and slow-looking (v: the verdicts by time alone)?  Its
 * own block times are then, half of them or more, that member's link. */
static bool
fed_by_slower(const struct slow_group *g, const enum slow_verdict *v,
	      size_t i)
{
	size_t f = g->feeder != NULL ? g->feeder[i] : SLOW_NO_FEEDER;

	return f < g->n && v[f] != SLOW_NO && g->block_us[f] > g->block_us[i];
}

/* Judge every member; returns how many are slow.  If the others' times
 * spread over a range, they say nothing (links that pass bursts faster
 * than their rate: each time says how long a link was idle before):
 * nobody is slow.  Slow blocks that do not stand SLOW_GAP clear of the
 * others', or that come in a chain right after one with slow blocks
 * (they come through its link), or that come half of them or more from
 * a member slower still (the binomial pipeline's relays), may be slow: such
 * a member is neither called slow nor counted as one the slow ones hold
 * back.  So may a member whose link is not busy: what holds it back is
 * what feeds it (on links that pass bursts faster than their rate, the
 * blocks a relay forwards as they come pass in one burst, and those a
 * member gets back to back, from the sender say, at the link's rate: it
 * would look slow against the others).  And so may a chain's head: it
 * gets every block from the sender, back to back, and its link is busy
 * whether the sender's link or its own is the slower. */
static size_t
judge(const struct slow_group *g, uint64_t median, enum slow_verdict *v)
{
	uint64_t top = others_top(g, median);
	size_t i, nslow = 0;

	memset(v, 0, g->n * sizeof(*v));	/* SLOW_NO */
	if (top == 0)
		return 0;
	for (i = 0; i < g->n; i++) {
		if ((double)g->block_us[i] < SLOW_FACTOR * (double)median ||
		    is_done(g, i))
			continue;
		v[i] = SLOW_MAYBE;
		if (fed_through_slow(g, v, i) || !busy(g, i) ||
		    (double)g->block_us[i] < SLOW_GAP * (double)top)
			continue;
		v[i] = SLOW_YES;
		nslow++;
	}
	for (i = 0; i < g->n; i++)
		if (v[i] == SLOW_YES && fed_by_slower(g, v, i)) {
			v[i] = SLOW_MAYBE;
			nslow--;
		}
	return nslow;
}

/* Does a member that is not slow (or inherits) come after a slow one (in
 * a chain, the only ones a slow member holds back)? */
static bool
fast_after_slow(const struct slow_group *g, const enum slow_verdict *v,
		const bool *inh)
{
	size_t i;
	bool slow_before = false;

	for (i = 0; i < g->n; i++) {
		if (v[i] == SLOW_YES)
			slow_before = true;
		else if ((v[i] == SLOW_NO || inh[i]) && slow_before &&
			 !is_done(g, i))
			return true;
	}
	return false;
}

/* Going on, the others wait on the slowest for the blocks still missing
 * (the least advanced member's); starting again, the others take the
 * restart and a chain of their own at the group's median block time.
 * Worth it if that is a quarter sooner and SLOW_MIN_GAIN_US at least,
 * and only for transfers of 2 blocks per member or more, where the
 * chain's one step per member costs little whatever the block time
 * (under CPU contention, as on loopback, block times say little). */
static bool
worth_it(const struct slow_group *g, const enum slow_verdict *v,
	 const bool *inh, uint64_t median)
{
	uint64_t least = g->blocks, slowest = 0, nfast = 0;
	double stay, again;
	size_t i;

	for (i = 0; i < g->n; i++) {
		if (is_done(g, i))
			continue;
		if (g->held[i] < least)
			least = g->held[i];
		if (v[i] == SLOW_YES && g->block_us[i] > slowest)
			slowest = g->block_us[i];
		nfast += v[i] == SLOW_NO || inh[i];
	}
	if (g->blocks < 2 * (uint64_t)g->n)
		return false;
	stay = (double)(g->blocks - least) * (double)slowest;
	again = (double)g->restart_us +
		(double)(g->blocks + nfast) * (double)median;
	return again < 0.75 * stay && stay - again >= SLOW_MIN_GAIN_US;
}

/* Is every member's pace known (not 0), and its block time the median of
 * SLOW_MIN_HELD blocks at least (early on, while the pipeline fills, the
 * paces of a chain's later members are still climbing)? */
static bool
paces_known(const struct slow_group *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (!is_done(g, i) &&
		    (g->pace[i] <= 0 || g->held[i] < SLOW_MIN_HELD))
			return false;
	return true;
}

/* In a chain whose relays pass blocks on as they land (over TCP, where
 * the sender judges), a member's blocks come no faster than the one
 * before it passes them on: behind a slow member every member's blocks
 * are as slow, whatever its own link.  Such a member inherits: its time
 * within SLOW_BUNCH of the one before, which stands SLOW_FACTOR clear of
 * the fastest before it.  Its own link cannot be seen: it may be slow
 * (never called slow), is left out of the group's typical time, and
 * counts among those the slow one holds back (were its link slow too,
 * the push after the restart would find it).  inh[i] says which. */
static void
find_inheritors(const struct slow_group *g, bool *inh)
{
	uint64_t fastest = UINT64_MAX;
	size_t i;

	for (i = 0; i < g->n; i++) {
		inh[i] = g->chain && i > 0 &&
			 (double)g->block_us[i] <
			 SLOW_BUNCH * (double)g->block_us[i - 1] &&
			 (double)g->block_us[i - 1] >=
			 SLOW_FACTOR * (double)fastest;
		if (g->block_us[i] < fastest)
			fastest = g->block_us[i];
	}
}

static ssize_t
find_in(const struct slow_group *g, const bool *inh, enum slow_verdict *v,
	uint64_t *median_us)
{
	size_t nslow;
	int rc;

	rc = typical_time(g, inh, median_us);
	if (rc < 0)
		return rc;
	if (*median_us == 0 || !paces_known(g)) {
		memset(v, 0, g->n * sizeof(*v));
		return 0;
	}
	nslow = judge(g, *median_us, v);
	if (nslow == 0 || (g->chain && !fast_after_slow(g, v, inh)) ||
	    !worth_it(g, v, inh, *median_us))
		return 0;
	return (ssize_t)nslow;
}

ssize_t
slow_find(const struct slow_group *g, enum slow_verdict *v,
	  uint64_t *median_us)
{
	bool *inh;
	ssize_t rc;

	*median_us = 0;
	if (g->n == 0)
		return 0;
	inh = malloc(g->n * sizeof(*inh));
	if (inh == NULL)
		return -ENOMEM;
	find_inheritors(g, inh);
	rc = find_in(g, inh, v, median_us);
	free(inh);
	return rc;
}

enum slow_verdict
slow_confirm(double own_s, double others_s)
{
	return others_s <= 0 || own_s >= SLOW_CONFIRM * others_s ?
	       SLOW_YES : SLOW_NO;
}
