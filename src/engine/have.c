/* SPDX-License-Identifier: MIT */
/*
 * have - what members hold before the schedule starts (a resumed push, a
 * delta; engine.h: cfg.had and cfg.lacks).
 *
 * A member does not receive the blocks it had, and a block goes to a
 * neighbour only if that neighbour lacks it: every link carries what its
 * receiver lacks and nothing else, and a member passes on the blocks it
 * had from its own copy.  The schedule is otherwise RDMC's: every
 * transfer left has its block at its sender in time, because the sender
 * either had it or receives it by the same transfer as before.  Both ends
 * of a link judge from the same set (a member's had is the complement of
 * what its senders are told it lacks), so they agree on every transfer
 * between them, and on which neighbours they exchange nothing with.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"

static uint64_t
count_bits(const uint8_t *map, uint64_t k)
{
	uint64_t b, n = 0;

	for (b = 0; b < k; b++)
		n += eng_bit_is_set(map, b);
	return n;
}

static uint8_t *
copy_bits(const uint8_t *map, uint64_t k)
{
	uint8_t *c = calloc(k / 8 + 1, 1);
	uint64_t b;

	for (b = 0; c != NULL && b < k; b++)	/* bits past k stay clear */
		if (eng_bit_is_set(map, b))
			eng_bit_set(c, b);
	return c;
}

/* Is transfer x (ours: a send, or a receive) one the member leaves out? */
static bool
left_out(struct eng *e, const struct sched_xfer *x, bool send)
{
	const struct epeer *p;

	if (!send)
		return e->had != NULL && eng_bit_is_set(e->had, x->block);
	p = eng_find_peer(e, x->peer);
	return p != NULL && p->lacks != NULL &&
	       !eng_bit_is_set(p->lacks, x->block);
}

static bool
next_xfer(struct eng *e, bool send, uint64_t from, uint64_t *step,
	  struct sched_xfer *x)
{
	for (;;) {
		if (!(send ? sched_next_send : sched_next_recv)(e->s, from,
								 step, x))
			return false;
		if (!left_out(e, x, send))
			return true;
		from = *step + 1;
	}
}

bool
eng_next_send(struct eng *e, uint64_t from, uint64_t *step,
	      struct sched_xfer *x)
{
	return next_xfer(e, true, from, step, x);
}

bool
eng_next_recv(struct eng *e, uint64_t from, uint64_t *step,
	      struct sched_xfer *x)
{
	return next_xfer(e, false, from, step, x);
}

/* With transfers left out, which neighbours we still send to and
 * receive from, and the last step with each: the schedule walked once
 * (its transfers are this member's: k + log n or so). */
static void
filtered_lasts(struct eng *e)
{
	struct sched_xfer x;
	struct epeer *p;
	uint64_t step, from;
	size_t i;
	int send;

	for (i = 0; i < e->npeers; i++)
		e->peers[i].sends_to = e->peers[i].recvs_from = false;
	for (send = 0; send < 2; send++) {
		for (from = 0; next_xfer(e, send, from, &step, &x);
		     from = step + 1) {
			if ((p = eng_find_peer(e, x.peer)) == NULL)
				continue;
			if (send) {
				p->sends_to = true;
				p->last_send = step;
			} else {
				p->recvs_from = true;
				p->last_recv = step;
			}
		}
	}
}

int
eng_have_init(struct eng *e)
{
	const uint8_t *lacks;
	bool any = false;
	size_t i;

	if (e->cfg.had != NULL && e->cfg.rank != 0) {
		if ((e->had = copy_bits(e->cfg.had, e->k)) == NULL)
			return -ENOMEM;
		memcpy(e->held, e->had, e->k / 8 + 1);
		e->nhad = e->nheld = count_bits(e->had, e->k);
		any = true;
	}
	for (i = 0; e->cfg.lacks != NULL && i < e->npeers; i++) {
		lacks = e->cfg.lacks(e->cfg.ctx, e->peers[i].rank);
		if (lacks == NULL)
			continue;
		if ((e->peers[i].lacks = copy_bits(lacks, e->k)) == NULL)
			return -ENOMEM;
		any = true;
	}
	if (any)
		filtered_lasts(e);
	return 0;
}

uint64_t
eng_received(const struct eng *e)
{
	return e->nheld - e->nhad;
}
