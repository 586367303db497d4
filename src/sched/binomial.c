/* SPDX-License-Identifier: MIT */
/*
 * binomial - the binomial pipeline schedule (see binomial.h).
 *
 * Binomial pipeline (Ganesan & Seshadri; RDMC, DSN 2018 section 4.4 and
 * "Pushing Bytes" appendix A).  With l = floor(log2 n), the 2^l ranks below
 * 2^l sit on the vertices of an l-dimensional hypercube.  At step j every
 * vertex exchanges a block with its neighbour along dimension d = j mod l.
 * The block a vertex u receives at step j follows from u's bits alone:
 *
 *   - bit d of u is clear: the "old" block j - l (nothing while j < l);
 *   - bit d of u is set and u has another set bit, the nearest one being i
 *     positions above d (cyclically): the "new" block j + i - l;
 *   - u == 2^d: block j, straight from the sender;
 *
 * capped at k - 1 while the sender repeats its last block.  A power-of-two
 * group finishes in k + l - 1 steps.
 *
 * Other group sizes pair the extra ranks with vertices: rank v + 2^l - 1 is
 * the twin of vertex v, for 1 <= v <= n - 2^l.  A paired vertex behaves as one
 * node towards the hypercube.  One of its two members receives the vertex's
 * incoming blocks (the "receiver"), the other sends the vertex's outgoing
 * blocks; the roles swap after every step at which the vertex gets a new
 * block (bit d set), so that the sending member always holds the block it
 * must send.  Meanwhile the receiver hands its twin the block it got last.
 * One extra step, at the end, lets each twin pass its partner the one block
 * still missing: k + l steps in all.
 */
#include "sched/binomial.h"

#include <assert.h>

unsigned
bp_log2(uint64_t x)
{
	unsigned l = 0;

	assert(x >= 1);
	while (x >>= 1)
		l++;
	return l;
}


/* ---------------------------------------------------------------------
 * Binomial pipeline: hypercube vertices
 */

static bool
bit(uint32_t x, unsigned i)
{
	return (x >> i) & 1u;
}

/* The block vertex u receives at vertex step j, if any. */
static bool
vertex_block(const struct bp *p, uint32_t u, uint64_t j, uint64_t *block)
{
	unsigned d = (unsigned)(j % p->l);
	unsigned i;

	if (u == 0 || j >= p->vsteps)
		return false;
	if (!bit(u, d)) {
		if (j < p->l)
			return false;
		*block = j - p->l;
		return true;
	}
	for (i = 1; i < p->l; i++)
		if (bit(u, (d + i) % p->l))
			break;
	if (i == p->l) {	/* u == 2^d: the sender's next block */
		*block = j < p->k - 1 ? j : p->k - 1;
		return true;
	}
	if (j + i < p->l)
		return false;
	*block = j + i - p->l < p->k - 1 ? j + i - p->l : p->k - 1;
	return true;
}

static uint32_t
neighbour(const struct bp *p, uint32_t v, uint64_t j)
{
	return v ^ (1u << (j % p->l));
}

static uint32_t
vertex_of(const struct bp *p, uint32_t rank)
{
	return rank < p->cube ? rank : rank - p->cube + 1;
}

static bool
has_twin(const struct bp *p, uint32_t v)
{
	return v != 0 && v + p->cube - 1 < p->n;
}

static uint32_t
twin_of(const struct bp *p, uint32_t rank)
{
	return rank < p->cube ? rank + p->cube - 1 : rank - p->cube + 1;
}

/* How often the roles inside vertex v swapped before step j: once after
 * every step whose dimension bit is set in v. */
static uint64_t
flips(const struct bp *p, uint32_t v, uint64_t j)
{
	uint32_t low = v & ((1u << (j % p->l)) - 1);

	return (j / p->l) * (uint64_t)__builtin_popcount(v) +
	       (uint64_t)__builtin_popcount(low);
}

/* The member of vertex v that receives from the hypercube at step j. */
static uint32_t
receiver(const struct bp *p, uint32_t v, uint64_t j)
{
	if (!has_twin(p, v) || flips(p, v, j) % 2 == 0)
		return v;
	return v + p->cube - 1;
}

/* The member of vertex v that sends to the hypercube at step j. */
static uint32_t
sender(const struct bp *p, uint32_t v, uint64_t j)
{
	return has_twin(p, v) ? twin_of(p, receiver(p, v, j)) : v;
}

/* The block the receiver of paired vertex v hands its twin at step j: the
 * one it received last, which the twin does not have yet. */
static bool
handover_block(const struct bp *p, uint32_t v, uint64_t j, uint64_t *block)
{
	uint64_t f = flips(p, v, j), prev;

	if (f == 0 || j >= p->vsteps)
		return false;
	prev = j - 1;
	if (flips(p, v, prev) != f) {
		/* Just became the receiver: pass on what it got at the end of
		 * its previous turn. */
		if (f < 2)
			return false;
		while (flips(p, v, prev) != f - 2)
			prev--;
	}
	return vertex_block(p, v, prev, block);
}

/* The last step before `end` at which `rank` received for vertex v. */
static uint64_t
last_receive_step(const struct bp *p, uint32_t v, uint32_t rank, uint64_t end)
{
	uint64_t s = end;

	while (s > 0 && receiver(p, v, s - 1) != rank)
		s--;
	return s - 1;
}

/* ---------------------------------------------------------------------
 * Binomial pipeline: members
 */

static bool
bp_is_final_step(const struct bp *p, uint64_t step)
{
	return p->steps > p->vsteps && step == p->vsteps;
}

/* Final step of a non-power-of-two group: every twin passes its partner the
 * block it received last. */
static bool
bp_final_send(const struct bp *p, uint32_t rank, struct sched_xfer *out)
{
	uint32_t v = vertex_of(p, rank), u = v ^ 1u;

	if (p->k == 1) {
		/* A single block: the member of each paired vertex that lacks
		 * it gets it across dimension 0, from where larger messages
		 * bring its first block (so that does not depend on k). */
		if (!has_twin(p, u) || rank != sender(p, v, p->vsteps))
			return false;
		out->peer = receiver(p, u, p->vsteps);
		out->block = 0;
		return true;
	}
	if (!has_twin(p, v))
		return false;
	out->peer = twin_of(p, rank);
	return vertex_block(p, v, last_receive_step(p, v, rank, p->vsteps),
			    &out->block);
}

static bool
bp_final_recv(const struct bp *p, uint32_t rank, struct sched_xfer *out)
{
	uint32_t v = vertex_of(p, rank);
	struct sched_xfer x;

	if (!has_twin(p, v))
		return false;
	if (p->k == 1) {
		if (rank != receiver(p, v, p->vsteps))
			return false;
		out->peer = sender(p, v ^ 1u, p->vsteps);
		out->block = 0;
		return true;
	}
	if (!bp_final_send(p, twin_of(p, rank), &x))
		return false;
	out->peer = twin_of(p, rank);
	out->block = x.block;
	return true;
}

bool
bp_send(const struct bp *p, uint32_t rank, uint64_t step,
	struct sched_xfer *out)
{
	uint32_t v = vertex_of(p, rank), u;

	if (step >= p->steps)
		return false;
	if (bp_is_final_step(p, step))
		return bp_final_send(p, rank, out);
	if (has_twin(p, v) && rank == receiver(p, v, step)) {
		out->peer = twin_of(p, rank);
		return handover_block(p, v, step, &out->block);
	}
	u = neighbour(p, v, step);
	if (!vertex_block(p, u, step, &out->block))
		return false;
	out->peer = receiver(p, u, step);
	return true;
}

bool
bp_recv(const struct bp *p, uint32_t rank, uint64_t step,
	struct sched_xfer *out)
{
	uint32_t v = vertex_of(p, rank), u;

	if (step >= p->steps || rank == 0)
		return false;
	if (bp_is_final_step(p, step))
		return bp_final_recv(p, rank, out);
	if (rank != receiver(p, v, step)) {
		out->peer = twin_of(p, rank);
		return handover_block(p, v, step, &out->block);
	}
	u = neighbour(p, v, step);
	if (!vertex_block(p, v, step, &out->block))
		return false;
	out->peer = sender(p, u, step);
	return true;
}

void
bp_init(struct bp *p, uint32_t n, uint64_t k)
{
	p->n = n;
	p->k = k;
	p->l = bp_log2(n);
	p->cube = 1u << p->l;
	if (n < 2 || k == 0) {
		p->vsteps = p->steps = 0;
		return;
	}
	p->vsteps = k + p->l - 1;
	p->steps = p->vsteps + (n != p->cube);
}
