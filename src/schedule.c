/*
 * schedule - block transfer schedules (see schedule.h).
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
#include "schedule.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sched {
	enum sched_alg alg;
	uint32_t n;
	uint32_t rank;
	uint64_t k;
	unsigned l;		/* floor(log2 n) */
	uint32_t cube;		/* 2^l vertices */
	uint64_t steps;
};

/* Parameters of the binomial pipeline, shared by the helpers below. */
struct bp {
	uint32_t n;
	uint64_t k;
	unsigned l;
	uint32_t cube;
	uint64_t vsteps;	/* steps of the hypercube exchange */
	uint64_t steps;		/* vsteps, plus one for twins */
};

static unsigned
floor_log2(uint64_t x)
{
	unsigned l = 0;

	while (x >>= 1)
		l++;
	return l;
}

static unsigned
ceil_log2(uint64_t x)
{
	unsigned l = floor_log2(x);

	return ((1ull << l) < x) ? l + 1 : l;
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

static bool
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

static bool
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

static void
bp_init(struct bp *p, uint32_t n, uint64_t k)
{
	p->n = n;
	p->k = k;
	p->l = floor_log2(n);
	p->cube = 1u << p->l;
	if (n < 2 || k == 0) {
		p->vsteps = p->steps = 0;
		return;
	}
	p->vsteps = k + p->l - 1;
	p->steps = p->vsteps + (n != p->cube);
}

/* ---------------------------------------------------------------------
 * Chain, binomial tree, sequential
 */

static bool
chain_send(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	if (s->rank + 1 >= s->n || step < s->rank || step - s->rank >= s->k)
		return false;
	out->peer = s->rank + 1;
	out->block = step - s->rank;
	return true;
}

static bool
chain_recv(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	if (s->rank == 0 || step + 1 < s->rank || step + 1 - s->rank >= s->k)
		return false;
	out->peer = s->rank - 1;
	out->block = step + 1 - s->rank;
	return true;
}

/* Binomial tree: in stage t (k steps each), every rank r < 2^t sends the
 * whole message to r + 2^t. */
static bool
tree_send(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	uint64_t stage = step / s->k;
	uint64_t span = 1ull << stage;

	if (step >= s->steps || s->rank >= span || s->rank + span >= s->n)
		return false;
	out->peer = (uint32_t)(s->rank + span);
	out->block = step % s->k;
	return true;
}

static bool
tree_recv(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	uint64_t stage = step / s->k;
	uint64_t span = 1ull << stage;

	if (step >= s->steps || s->rank < span || s->rank >= 2 * span)
		return false;
	out->peer = (uint32_t)(s->rank - span);
	out->block = step % s->k;
	return true;
}

static bool
seq_send(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	if (s->rank != 0 || step >= s->steps)
		return false;
	out->peer = (uint32_t)(1 + step / s->k);
	out->block = step % s->k;
	return true;
}

static bool
seq_recv(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	if (s->rank == 0 || step >= s->steps || 1 + step / s->k != s->rank)
		return false;
	out->peer = 0;
	out->block = step % s->k;
	return true;
}

/* ---------------------------------------------------------------------
 * Public interface
 */

static uint64_t
count_steps(enum sched_alg alg, uint32_t n, uint64_t k)
{
	struct bp p;

	if (n < 2 || k == 0)
		return 0;
	switch (alg) {
	case SCHED_BINOMIAL:
		bp_init(&p, n, k);
		return p.steps;
	case SCHED_CHAIN:
		return k + n - 2;
	case SCHED_TREE:
		return k * ceil_log2(n);
	default:
		return k * (n - 1);
	}
}

int
sched_new(enum sched_alg alg, uint32_t n, uint32_t rank, uint64_t k,
	  struct sched **out)
{
	struct sched *s;

	*out = NULL;
	if ((unsigned)alg >= SCHED_NALG || n == 0 || n > SCHED_MAX_MEMBERS ||
	    rank >= n || k > UINT64_MAX / SCHED_MAX_MEMBERS)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->alg = alg;
	s->n = n;
	s->rank = rank;
	s->k = k;
	s->l = floor_log2(n);
	s->cube = 1u << s->l;
	s->steps = count_steps(alg, n, k);
	*out = s;
	return 0;
}

void
sched_free(struct sched *s)
{
	free(s);
}

uint64_t
sched_steps(const struct sched *s)
{
	return s->steps;
}

bool
sched_send(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	struct bp p;

	if (step >= s->steps)
		return false;
	switch (s->alg) {
	case SCHED_BINOMIAL:
		bp_init(&p, s->n, s->k);
		return bp_send(&p, s->rank, step, out);
	case SCHED_CHAIN:
		return chain_send(s, step, out);
	case SCHED_TREE:
		return tree_send(s, step, out);
	default:
		return seq_send(s, step, out);
	}
}

bool
sched_recv(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	struct bp p;

	if (step >= s->steps)
		return false;
	switch (s->alg) {
	case SCHED_BINOMIAL:
		bp_init(&p, s->n, s->k);
		return bp_recv(&p, s->rank, step, out);
	case SCHED_CHAIN:
		return chain_recv(s, step, out);
	case SCHED_TREE:
		return tree_recv(s, step, out);
	default:
		return seq_recv(s, step, out);
	}
}

/* The earliest step >= from at which the member may send (send == true)
 * or receive; steps before it certainly hold nothing. */
static uint64_t
clamp_window(const struct sched *s, uint64_t from, uint64_t lo, uint64_t hi)
{
	if (from >= hi || lo >= s->steps)
		return s->steps;
	return from > lo ? from : lo;
}

/* The earliest step >= from at which the member may send (send == true)
 * or receive; steps before it certainly hold nothing.  A member of a chain,
 * sequence or tree is busy in one window of k steps per role and stage. */
static uint64_t
skip_idle(const struct sched *s, uint64_t from, bool send)
{
	uint64_t stage, lo;

	switch (s->alg) {
	case SCHED_CHAIN:
		if (send)
			return clamp_window(s, from, s->rank, s->rank + s->k);
		lo = s->rank ? s->rank - 1 : s->steps;
		return clamp_window(s, from, lo, lo + s->k);
	case SCHED_SEQUENTIAL:
		if (send)
			return s->rank == 0 ? from : s->steps;
		lo = s->rank ? (uint64_t)(s->rank - 1) * s->k : s->steps;
		return clamp_window(s, from, lo, lo + s->k);
	case SCHED_TREE:
		if (!send) {
			lo = s->rank ? floor_log2(s->rank) * s->k : s->steps;
			return clamp_window(s, from, lo, lo + s->k);
		}
		for (stage = from / s->k; (stage + 1) * s->k <= s->steps &&
		     ((1ull << stage) <= s->rank ||
		      s->rank + (1ull << stage) >= s->n);
		     stage++)
			;
		return clamp_window(s, from, stage * s->k, s->steps);
	default:
		return from;
	}
}

static bool
next_xfer(const struct sched *s, uint64_t from, uint64_t *step,
	  struct sched_xfer *out, bool send)
{
	uint64_t j;

	for (j = skip_idle(s, from, send); j < s->steps; j++) {
		if (send ? sched_send(s, j, out) : sched_recv(s, j, out)) {
			*step = j;
			return true;
		}
		if (s->alg == SCHED_TREE)
			j = skip_idle(s, j + 1, send) - 1;
	}
	return false;
}

bool
sched_next_send(const struct sched *s, uint64_t from, uint64_t *step,
		struct sched_xfer *out)
{
	return s->k > 0 && next_xfer(s, from, step, out, true);
}

bool
sched_next_recv(const struct sched *s, uint64_t from, uint64_t *step,
		struct sched_xfer *out)
{
	return s->k > 0 && next_xfer(s, from, step, out, false);
}

/* Binomial pipeline: scan back from the end; neighbours are busy until
 * the last few steps, so this is short unless k is small. */
static bool
bp_last_with(const struct sched *s, uint32_t peer, bool send, uint64_t *step)
{
	struct sched_xfer x;
	uint64_t j;

	for (j = s->steps; j-- > 0;) {
		if ((send ? sched_send(s, j, &x) : sched_recv(s, j, &x)) &&
		    x.peer == peer) {
			*step = j;
			return true;
		}
	}
	return false;
}

static bool
last_at(uint64_t v, uint64_t *step)
{
	*step = v;
	return true;
}

bool
sched_last_with(const struct sched *s, uint32_t peer, bool send,
		uint64_t *step)
{
	uint64_t t;

	if (s->steps == 0 || peer >= s->n || peer == s->rank)
		return false;
	switch (s->alg) {
	case SCHED_BINOMIAL:
		return bp_last_with(s, peer, send, step);
	case SCHED_CHAIN:
		if (send)
			return peer == s->rank + 1 &&
			       last_at(s->rank + s->k - 1, step);
		return peer + 1 == s->rank && last_at(peer + s->k - 1, step);
	case SCHED_SEQUENTIAL:
		if (send)
			return s->rank == 0 && last_at(peer * s->k - 1, step);
		return peer == 0 && last_at(s->rank * s->k - 1, step);
	default:
		if (!send)
			return s->rank > 0 &&
			       peer == s->rank - (1u << floor_log2(s->rank)) &&
			       last_at((floor_log2(s->rank) + 1) * s->k - 1,
				       step);
		if (peer <= s->rank)
			return false;
		t = floor_log2(peer - s->rank);
		return (1ull << t) == peer - s->rank && (1ull << t) > s->rank &&
		       last_at((t + 1) * s->k - 1, step);
	}
}

/* The binomial pipeline's first receive does not depend on k: find it with
 * a k large enough that nothing is capped, then report the block uncapped. */
static bool
bp_first_recv(uint32_t n, uint32_t rank, struct sched_xfer *out)
{
	struct bp p;
	uint64_t step;

	bp_init(&p, n, 4ull * floor_log2(n) + 4);
	for (step = 0; step < p.steps; step++)
		if (bp_recv(&p, rank, step, out))
			return true;
	return false;
}

bool
sched_first_recv(enum sched_alg alg, uint32_t n, uint32_t rank,
		 struct sched_xfer *out)
{
	if (rank == 0 || rank >= n)
		return false;
	out->block = 0;
	switch (alg) {
	case SCHED_BINOMIAL:
		return bp_first_recv(n, rank, out);
	case SCHED_CHAIN:
		out->peer = rank - 1;
		return true;
	case SCHED_TREE:
		out->peer = rank - (1u << floor_log2(rank));
		return true;
	default:
		out->peer = 0;
		return true;
	}
}

/* Insert `peer` into the ascending set[0..count) unless present; the set
 * has room for one more. */
static size_t
add_peer(uint32_t *set, size_t count, uint32_t peer)
{
	size_t i, j;

	for (i = 0; i < count && set[i] < peer; i++)
		;
	if (i < count && set[i] == peer)
		return count;
	for (j = count; j > i; j--)
		set[j] = set[j - 1];
	set[i] = peer;
	return count + 1;
}

/* A binomial pipeline member has at most a twin and two members on each of
 * its l <= 20 neighbour vertices. */
#define BP_MAX_PEERS 48

/* Scan steps [from, to) for peers. */
static size_t
scan_peers(const struct sched *s, uint64_t from, uint64_t to, uint32_t *set,
	   size_t count)
{
	struct sched_xfer x;
	uint64_t step;

	for (step = from; step < to && count < BP_MAX_PEERS; step++) {
		if (sched_send(s, step, &x))
			count = add_peer(set, count, x.peer);
		if (sched_recv(s, step, &x))
			count = add_peer(set, count, x.peer);
	}
	return count;
}

/* The binomial pipeline's steady state repeats with a period of at most 2l
 * steps, so the start-up, two periods and the end hold every peer. */
static size_t
bp_peers(const struct sched *s, uint32_t *out, size_t max)
{
	uint64_t head = 4ull * s->l + 4, tail = 2ull * s->l + 2;
	uint32_t set[BP_MAX_PEERS + 1];
	size_t count, i;

	if (s->steps <= head + tail) {
		count = scan_peers(s, 0, s->steps, set, 0);
	} else {
		count = scan_peers(s, 0, head, set, 0);
		count = scan_peers(s, s->steps - tail, s->steps, set, count);
	}
	for (i = 0; i < count && i < max; i++)
		out[i] = set[i];
	return count;
}

/* Peers of the other algorithms, generated in ascending order. */
static size_t
simple_peers(const struct sched *s, uint32_t *out, size_t max)
{
	size_t count = 0;
	uint64_t r;

#define EMIT(x)                                                               \
	do {                                                                  \
		if (count < max)                                              \
			out[count] = (uint32_t)(x);                           \
		count++;                                                      \
	} while (0)
	switch (s->alg) {
	case SCHED_CHAIN:
		if (s->rank > 0)
			EMIT(s->rank - 1);
		if (s->rank + 1 < s->n)
			EMIT(s->rank + 1);
		break;
	case SCHED_TREE:
		if (s->rank > 0)
			EMIT(s->rank - (1u << floor_log2(s->rank)));
		for (r = 1; s->rank + r < s->n; r <<= 1)
			if (r > s->rank)
				EMIT(s->rank + r);
		break;
	default:
		if (s->rank > 0)
			EMIT(0);
		else
			for (r = 1; r < s->n; r++)
				EMIT(r);
		break;
	}
#undef EMIT
	return count;
}

size_t
sched_peers(const struct sched *s, uint32_t *out, size_t max)
{
	if (s->steps == 0)
		return 0;
	if (s->alg == SCHED_BINOMIAL)
		return bp_peers(s, out, max);
	return simple_peers(s, out, max);
}

static const char *const alg_names[SCHED_NALG] = {
	[SCHED_BINOMIAL] = "binomial",
	[SCHED_CHAIN] = "chain",
	[SCHED_TREE] = "tree",
	[SCHED_SEQUENTIAL] = "sequential",
};

const char *
sched_alg_name(enum sched_alg alg)
{
	return (unsigned)alg < SCHED_NALG ? alg_names[alg] : "unknown";
}

int
sched_alg_parse(const char *name, enum sched_alg *out)
{
	static const struct {
		const char *name;
		enum sched_alg alg;
	} aliases[] = {
		{ "binomial", SCHED_BINOMIAL },
		{ "pipeline", SCHED_BINOMIAL },
		{ "binomial-pipeline", SCHED_BINOMIAL },
		{ "chain", SCHED_CHAIN },
		{ "tree", SCHED_TREE },
		{ "binomial-tree", SCHED_TREE },
		{ "sequential", SCHED_SEQUENTIAL },
		{ "seq", SCHED_SEQUENTIAL },
	};
	size_t i;

	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		if (strcmp(name, aliases[i].name) == 0) {
			*out = aliases[i].alg;
			return 0;
		}
	}
	return -EINVAL;
}
