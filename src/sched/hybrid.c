/* SPDX-License-Identifier: MIT */
/*
 * hybrid - the binomial pipeline across racks (hybrid.h).
 *
 * A member builds its table by simulating the racks up to the one after
 * its own: rack r's pipeline (shifted to start at step start), which says
 * when each member of the rack holds each block and when it is idle, then
 * the feeding of rack r + 1's leader from those idle members.  Memory while
 * building: a step per (member of one rack, block).
 */
#include "sched/hybrid.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sched/binomial.h"

#define NEVER UINT64_MAX
/* How far past the lowest block the leader lacks a feeder looks: the
 * members of a rack hold blocks close behind its frontier. */
#define FEED_WINDOW 64u

/* One rack being simulated. */
struct rack {
	uint32_t h, base;	/* members, rank of the first (its root) */
	uint64_t start;		/* the step its pipeline's step 0 is */
	uint64_t lsteps;	/* steps of its own pipeline */
	struct bp p;
	uint64_t *avail;	/* [m * k + b]: first step m may send b */
	uint64_t *fed;		/* [b]: step the next leader gets b, or NULL */
	uint32_t *feeder;	/* [b]: the member of this rack that sends it */
};

static bool
local_send(const struct rack *rk, uint32_t m, uint64_t t,
	   struct sched_xfer *x)
{
	return rk->h >= 2 && t >= rk->start && t - rk->start < rk->lsteps &&
	       bp_send(&rk->p, m, t - rk->start, x);
}

/* When every member of rk holds every block; the root's from `root_avail`
 * (NULL: from the start, the sender). */
static void
simulate(struct rack *rk, uint64_t k, const uint64_t *root_avail)
{
	struct sched_xfer x;
	uint64_t b, s;
	uint32_t m;

	for (b = 0; b < k; b++) {
		rk->avail[b] = root_avail ? root_avail[b] + 1 : 0;
		for (m = 1; m < rk->h; m++)
			rk->avail[(uint64_t)m * k + b] = NEVER;
	}
	for (s = 0; s < rk->lsteps; s++)
		for (m = 0; m < rk->h; m++)
			if (bp_send(&rk->p, m, s, &x))
				rk->avail[(uint64_t)x.peer * k + x.block] =
					rk->start + s + 1;
}

/* The lowest block in [lo, lo + FEED_WINDOW) not yet fed that member m
 * holds at step t, or NEVER. */
static uint64_t
feedable(const struct rack *rk, uint64_t k, uint32_t m, uint64_t lo,
	 uint64_t t)
{
	uint64_t b;

	for (b = lo; b < k && b < lo + FEED_WINDOW; b++)
		if (rk->fed[b] == NEVER && rk->avail[(uint64_t)m * k + b] <= t)
			return b;
	return NEVER;
}

/* Feed the next rack's leader from rk's idle members, a block per step. */
static void
feed(struct rack *rk, uint64_t k)
{
	struct sched_xfer x;
	uint64_t t, b, best, lo = 0, done = 0;
	uint32_t m, who = 0;

	for (b = 0; b < k; b++)
		rk->fed[b] = NEVER;
	for (t = rk->start; done < k; t++) {
		best = NEVER;
		for (m = 0; m < rk->h; m++) {
			if (local_send(rk, m, t, &x))
				continue;
			b = feedable(rk, k, m, lo, t);
			if (b < best) {
				best = b;
				who = m;
			}
		}
		if (best == NEVER)
			continue;
		rk->fed[best] = t;
		rk->feeder[best] = who;
		done++;
		while (lo < k && rk->fed[lo] != NEVER)
			lo++;
	}
}

/* The first step of a rack's pipeline whose root gets block b at fed[b]:
 * late enough that the root holds every block it sends. */
static uint64_t
start_after(const struct rack *rk, const uint64_t *fed)
{
	struct sched_xfer x;
	uint64_t s, start = 0;

	if (rk->h < 2)
		return fed[0];
	for (s = 0; s < rk->lsteps; s++)
		if (bp_send(&rk->p, 0, s, &x) && fed[x.block] + 1 > s + start)
			start = fed[x.block] + 1 - s;
	return start;
}

/* ---------------------------------------------------------------------
 * The member's table
 */

static int
push_xfer(struct hy_xfer **v, size_t *n, uint64_t step, uint32_t peer,
	  uint64_t block)
{
	struct hy_xfer *grown;

	if ((*n & (*n - 1)) == 0) {	/* 0, 1, 2, 4, ...: double */
		grown = realloc(*v, (*n ? *n * 2 : 1) * sizeof(**v));
		if (grown == NULL)
			return -ENOMEM;
		*v = grown;
	}
	(*v)[(*n)++] = (struct hy_xfer){ .step = step, .peer = peer,
					 .block = block };
	return 0;
}

static int
cmp_step(const void *a, const void *b)
{
	const struct hy_xfer *x = a, *y = b;

	return x->step < y->step ? -1 : x->step > y->step;
}

/* The transfers of rk's member m in its own pipeline. */
static int
add_local(const struct rack *rk, uint32_t m, struct hy_table *t)
{
	struct sched_xfer x;
	uint64_t s;
	int rc = 0;

	for (s = 0; s < rk->lsteps && rc == 0 && rk->h >= 2; s++) {
		if (bp_send(&rk->p, m, s, &x))
			rc = push_xfer(&t->send, &t->nsend, rk->start + s,
				       rk->base + x.peer, x.block);
		if (rc == 0 && bp_recv(&rk->p, m, s, &x))
			rc = push_xfer(&t->recv, &t->nrecv, rk->start + s,
				       rk->base + x.peer, x.block);
	}
	return rc;
}

/* The feeding of the leader at rank `leader` by rk: as a feeder (m) or as
 * the leader (m == UINT32_MAX). */
static int
add_feed(const struct rack *rk, uint64_t k, uint32_t m, uint32_t leader,
	 struct hy_table *t)
{
	uint64_t b;
	int rc = 0;

	for (b = 0; b < k && rc == 0; b++) {
		if (m == UINT32_MAX)
			rc = push_xfer(&t->recv, &t->nrecv, rk->fed[b],
				       rk->base + rk->feeder[b], b);
		else if (rk->feeder[b] == m)
			rc = push_xfer(&t->send, &t->nsend, rk->fed[b], leader,
				       b);
	}
	return rc;
}

static void
rack_free(struct rack *rk)
{
	free(rk->avail);
	free(rk->fed);
	free(rk->feeder);
	rk->avail = rk->fed = NULL;
	rk->feeder = NULL;
}

static int
rack_init(struct rack *rk, uint32_t h, uint32_t base, uint64_t k)
{
	*rk = (struct rack){ .h = h, .base = base };
	if (h >= 2) {
		bp_init(&rk->p, h, k);
		rk->lsteps = rk->p.steps;
	}
	rk->avail = malloc((k ? k : 1) * h * sizeof(*rk->avail));
	rk->fed = malloc((k ? k : 1) * sizeof(*rk->fed));
	rk->feeder = malloc((k ? k : 1) * sizeof(*rk->feeder));
	if (rk->avail == NULL || rk->fed == NULL || rk->feeder == NULL) {
		rack_free(rk);
		return -ENOMEM;
	}
	return 0;
}

static void
note_steps(struct hy_table *t, const struct rack *rk, uint64_t k, bool fed)
{
	uint64_t end = rk->start + rk->lsteps, b;

	for (b = 0; fed && b < k; b++)
		if (rk->fed[b] + 1 > end)
			end = rk->fed[b] + 1;
	if (end > t->steps)
		t->steps = end;
}

/* Simulate racks 0 .. last (the member's rack r, or r + 1), adding the
 * member's transfers. */
static int
run_racks(const uint32_t *sizes, size_t nracks, uint32_t rank, uint64_t k,
	  struct hy_table *t)
{
	struct rack cur = { 0 }, prev = { 0 };
	uint32_t base = 0;
	size_t r;
	int rc = 0;

	for (r = 0; r < nracks && rc == 0; base += sizes[r], r++) {
		if ((rc = rack_init(&cur, sizes[r], base, k)) < 0)
			break;
		if (r > 0)
			cur.start = start_after(&cur, prev.fed);
		simulate(&cur, k, r > 0 ? prev.fed : NULL);
		if (r + 1 < nracks)
			feed(&cur, k);
		note_steps(t, &cur, k, r + 1 < nracks);
		if (rank >= base && rank < base + sizes[r]) {
			rc = add_local(&cur, rank - base, t);
			if (rc == 0 && r + 1 < nracks)
				rc = add_feed(&cur, k, rank - base,
					      base + sizes[r], t);
		}
		if (rc == 0 && r > 0 && rank == base)
			rc = add_feed(&prev, k, UINT32_MAX, rank, t);
		rack_free(&prev);
		prev = cur;
		cur = (struct rack){ 0 };
	}
	rack_free(&prev);
	rack_free(&cur);
	return rc;
}

/* The index in t->peers[0..npeers) where `rank` is or belongs. */
static size_t
peer_slot(const struct hy_table *t, uint32_t rank)
{
	size_t lo = 0, hi = t->npeers, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (t->peers[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct hy_peer *
hy_peer_of(const struct hy_table *t, uint32_t rank)
{
	size_t i = peer_slot(t, rank);

	return i < t->npeers && t->peers[i].rank == rank ? &t->peers[i] : NULL;
}

/* The entry of peer `rank`, added if new: NULL without memory. */
static struct hy_peer *
peer_entry(struct hy_table *t, uint32_t rank)
{
	size_t i = peer_slot(t, rank);
	struct hy_peer *grown;

	if (i < t->npeers && t->peers[i].rank == rank)
		return &t->peers[i];
	if ((t->npeers & (t->npeers - 1)) == 0) {	/* 0, 1, 2, 4... */
		grown = realloc(t->peers, (t->npeers ? t->npeers * 2 : 1) *
					  sizeof(*grown));
		if (grown == NULL)
			return NULL;
		t->peers = grown;
	}
	memmove(&t->peers[i + 1], &t->peers[i],
		(t->npeers - i) * sizeof(*t->peers));
	t->npeers++;
	t->peers[i] = (struct hy_peer){ .rank = rank };
	return &t->peers[i];
}

/* The peers of the table's transfers, with the last step of each kind:
 * once, so that the queries need not scan the table. */
static int
note_peers(struct hy_table *t)
{
	struct hy_peer *e;
	size_t i;

	for (i = 0; i < t->nsend; i++) {
		if ((e = peer_entry(t, t->send[i].peer)) == NULL)
			return -ENOMEM;
		e->sends = true;
		e->last_send = t->send[i].step;	/* in step order */
	}
	for (i = 0; i < t->nrecv; i++) {
		if ((e = peer_entry(t, t->recv[i].peer)) == NULL)
			return -ENOMEM;
		e->recvs = true;
		e->last_recv = t->recv[i].step;
	}
	return 0;
}

int
hy_build(const uint32_t *sizes, size_t nracks, uint32_t rank, uint64_t k,
	 struct hy_table *out)
{
	uint64_t n = 0;
	size_t r;
	int rc;

	*out = (struct hy_table){ 0 };
	for (r = 0; r < nracks; r++) {
		if (sizes[r] == 0)
			return -EINVAL;
		n += sizes[r];
	}
	if (nracks == 0 || rank >= n)
		return -EINVAL;
	if (k == 0)
		return 0;
	rc = run_racks(sizes, nracks, rank, k, out);
	if (rc < 0) {
		hy_free(out);
		return rc;
	}
	if (out->nsend > 1)
		qsort(out->send, out->nsend, sizeof(*out->send), cmp_step);
	if (out->nrecv > 1)
		qsort(out->recv, out->nrecv, sizeof(*out->recv), cmp_step);
	rc = note_peers(out);
	if (rc < 0)
		hy_free(out);
	return rc;
}

void
hy_free(struct hy_table *t)
{
	free(t->send);
	free(t->recv);
	free(t->peers);
	*t = (struct hy_table){ 0 };
}
