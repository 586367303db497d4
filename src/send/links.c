/* SPDX-License-Identifier: MIT */
/*
 * links - what each member of a group lacks, where members hold some of
 * the file already (a resumed push, a delta).
 *
 * The group carries the union of what its members lack (group.c,
 * choose_map), but a link carries only what its receiver lacks, and a
 * member passes on what it held from its own copy (engine.h: had,
 * lacks).  So the members go in the order of what they hold, most first
 * (not with racks, nor after a regroup around slow hosts, whose order
 * is the command line's): in a chain, rank 0 then sends only what the first
 * member lacks, and that member feeds the others the blocks it had.
 * START tells each member, and each of its neighbours, the same set of
 * what it lacks (PROTO_LINK_RUNS runs at most), so that both ends of
 * every link agree on what crosses it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "send/push_int.h"
#include "util/bset.h"

/* Blocks of the stream h lacks (all, without a set). */
static uint64_t
lack_count(const struct push *p, const struct phost *h)
{
	return h->need != NULL ? bset_count(h->need)
			       : store_stream_blocks(p->st);
}

static int
by_lacks(const void *a, const void *b, void *push)
{
	const struct phost *x = *(struct phost *const *)a,
			   *y = *(struct phost *const *)b;
	uint64_t lx = lack_count(push, x), ly = lack_count(push, y);

	if (lx != ly)
		return lx < ly ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Did the command line order the hosts by speed (after a regroup: the
 * slow ones last)?  Then speed goes before holdings. */
static bool
ordered_by_speed(const struct push *p)
{
	size_t i;

	for (i = 0; p->cfg->slow != NULL && i < p->nh; i++)
		if (p->cfg->slow[i])
			return true;
	return false;
}

void
push_order_members(struct push *p, struct phost **members, size_t n)
{
	if (p->cfg->racks != NULL || n < 2 || ordered_by_speed(p))
		return;		/* racks keep their order: topology first */
	qsort_r(members, n, sizeof(*members), by_lacks, p);
}

/* h's set for START: what it lacks, coarsened to PROTO_LINK_RUNS (a
 * superset), or NULL: all.  0 or -ENOMEM. */
static int
link_set(struct phost *h)
{
	struct bset *none = NULL;
	int rc;

	bset_free(h->link);
	h->link = NULL;
	if (h->need == NULL)
		return 0;
	rc = bset_new(&none);
	if (rc == 0)
		rc = bset_union(h->need, none, &h->link);
	if (rc == 0)
		bset_coarsen(h->link, PROTO_LINK_RUNS);
	bset_free(none);
	return rc;
}

int
push_choose_links(struct push *p)
{
	uint32_t r;
	int rc = 0;

	p->has_lacks = false;
	for (r = 1; r < p->members && rc == 0; r++) {
		rc = link_set(p->by_rank[r]);
		p->has_lacks |= p->by_rank[r]->link != NULL;
	}
	if (rc == 0 && p->has_lacks) {
		free(p->lack_bits);
		p->lack_bits = malloc(store_blocks(p->st) / 8 + 1);
		if (p->lack_bits == NULL)
			rc = -ENOMEM;
	}
	return rc;
}

const uint8_t *
push_member_lacks(void *ctx, uint32_t rank)
{
	struct push *p = ctx;
	const struct phost *h;

	if (!p->has_lacks || rank == 0 || rank >= p->members)
		return NULL;
	h = p->by_rank[rank];
	if (h->link == NULL)
		return NULL;
	memset(p->lack_bits, 0, store_blocks(p->st) / 8 + 1);
	bset_mask(h->link, p->map, store_blocks(p->st), p->lack_bits);
	return p->lack_bits;
}

/* The bytes of block j of the schedule (the map's j-th). */
static uint64_t
block_bytes(const struct push *p, uint64_t j)
{
	uint64_t b = p->map != NULL ? bset_nth(p->map, j) : j,
		 off = b * p->block_size;

	return p->sum->bytes - off < p->block_size ? p->sum->bytes - off
						    : p->block_size;
}

uint64_t
push_rank0_bytes(struct push *p)
{
	struct sched_xfer x;
	struct sched *s;
	uint64_t step, from, b, bytes = 0;
	const struct phost *h;

	if (p->members < 2 ||
	    sched_new_racks(p->cfg->alg, p->members, 0, store_blocks(p->st),
			    p->racks, p->nracks, &s) < 0)
		return p->members < 2 ? 0 : p->sum->bytes;
	for (from = 0; sched_next_send(s, from, &step, &x); from = step + 1) {
		h = p->by_rank[x.peer];
		b = p->map != NULL ? bset_nth(p->map, x.block) : x.block;
		if (!p->has_lacks || h->link == NULL || bset_has(h->link, b))
			bytes += block_bytes(p, x.block);
	}
	sched_free(s);
	return bytes;
}
