/* SPDX-License-Identifier: MIT */
/*
 * schedule - block transfer schedules (see schedule.h).
 *
 * The binomial pipeline lives in binomial.c; the chain, binomial tree and
 * sequential schedules, which serve for comparison, are here, with what is
 * common to all: step counts, skipping idle steps, peer lists.
 */
#include "sched/schedule.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/binomial.h"
#include "sched/hybrid.h"

struct sched {
	enum sched_alg alg;
	uint32_t n;
	uint32_t rank;
	uint64_t k;
	unsigned l;		/* floor(log2 n) */
	uint64_t steps;
	bool racked;		/* the binomial pipeline across racks: */
	struct hy_table hy;	/* this member's transfers */
};

static unsigned
ceil_log2(uint64_t x)
{
	unsigned l = bp_log2(x);

	return ((1ull << l) < x) ? l + 1 : l;
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
	return sched_new_racks(alg, n, rank, k, NULL, 0, out);
}

/* sizes[0..nracks) sum to n and none is 0 */
static bool
racks_valid(uint32_t n, const uint32_t *sizes, size_t nracks)
{
	uint64_t sum = 0;
	size_t r;

	for (r = 0; r < nracks; r++) {
		if (sizes[r] == 0)
			return false;
		sum += sizes[r];
	}
	return sum == n;
}

int
sched_new_racks(enum sched_alg alg, uint32_t n, uint32_t rank, uint64_t k,
		const uint32_t *sizes, size_t nracks, struct sched **out)
{
	struct sched *s;
	int rc;

	*out = NULL;
	if ((unsigned)alg >= SCHED_NALG || n == 0 || n > SCHED_MAX_MEMBERS ||
	    rank >= n || k > UINT64_MAX / SCHED_MAX_MEMBERS ||
	    (nracks > 0 && !racks_valid(n, sizes, nracks)))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->alg = alg;
	s->n = n;
	s->rank = rank;
	s->k = k;
	s->l = bp_log2(n);
	s->steps = count_steps(alg, n, k);
	if (alg == SCHED_BINOMIAL && nracks >= 2) {
		s->racked = true;
		rc = hy_build(sizes, nracks, rank, k, &s->hy);
		if (rc < 0) {
			free(s);
			return rc;
		}
		s->steps = s->hy.steps;
	}
	*out = s;
	return 0;
}

void
sched_free(struct sched *s)
{
	if (s == NULL)
		return;
	hy_free(&s->hy);
	free(s);
}

/* Across racks: the first of v[0..n) at step >= from, or n. */
static size_t
hy_lower(const struct hy_xfer *v, size_t n, uint64_t from)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid].step < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool
hy_next(const struct sched *s, uint64_t from, bool send, bool exact,
	uint64_t *step, struct sched_xfer *out)
{
	const struct hy_xfer *v = send ? s->hy.send : s->hy.recv;
	size_t n = send ? s->hy.nsend : s->hy.nrecv;
	size_t i = hy_lower(v, n, from);

	if (i >= n || (exact && v[i].step != from))
		return false;
	if (step != NULL)
		*step = v[i].step;
	out->peer = v[i].peer;
	out->block = v[i].block;
	return true;
}

uint64_t
sched_steps(const struct sched *s)
{
	return s->steps;
}

/* The transfer this member sends (send == true) or receives at step. */
static bool
xfer_at(const struct sched *s, uint64_t step, bool send,
	struct sched_xfer *out)
{
	struct bp p;

	if (step >= s->steps)
		return false;
	if (s->racked)
		return hy_next(s, step, send, true, NULL, out);
	switch (s->alg) {
	case SCHED_BINOMIAL:
		bp_init(&p, s->n, s->k);
		return send ? bp_send(&p, s->rank, step, out)
			    : bp_recv(&p, s->rank, step, out);
	case SCHED_CHAIN:
		return send ? chain_send(s, step, out) : chain_recv(s, step, out);
	case SCHED_TREE:
		return send ? tree_send(s, step, out) : tree_recv(s, step, out);
	default:
		return send ? seq_send(s, step, out) : seq_recv(s, step, out);
	}
}

bool
sched_send(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	return xfer_at(s, step, true, out);
}

bool
sched_recv(const struct sched *s, uint64_t step, struct sched_xfer *out)
{
	return xfer_at(s, step, false, out);
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
		if (send && s->rank + 1 == s->n)
			return s->steps;	/* the last sends nothing */
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
			lo = s->rank ? bp_log2(s->rank) * s->k : s->steps;
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

/* ---------------------------------------------------------------------
 * Binomial pipeline: queries over many steps
 *
 * Which transfers a member of the binomial pipeline makes, and with whom,
 * repeats from step bp_head() on with a period of bp_period() = 2l steps,
 * up to the hypercube's last step (p.vsteps; a group of another size than
 * a power of two has one step more, its twins' final exchange).  Why,
 * from binomial.c, for a step j in [3l + 1, vsteps):
 *   - a vertex receives at every such step (vertex_block: j >= l), so
 *     whether a send happens depends only on whether the neighbour
 *     v ^ 2^(j mod l) is the sender's vertex 0 (period l);
 *   - which twin receives or sends for a vertex depends on the parity of
 *     its role swaps so far (flips), which has period 2l;
 *   - a twin's hand-over to its partner happens at every such step: the
 *     block it hands over came at most 2l + 1 steps earlier, at or after
 *     step l, when vertices receive.
 * Only the blocks differ (they advance by one a step, capped at k - 1),
 * not whether a transfer happens nor the peer.  So a stretch of one
 * period inside [bp_head, vsteps) holds every peer and every kind of
 * transfer that step bp_head and later hold before vsteps: the queries
 * below look at O(l) steps, whatever k is.  test_sched.c checks them
 * against a scan of every step. */

static uint64_t
bp_head(const struct sched *s)
{
	return 4ull * s->l + 4;	/* > 3l + 1, with room */
}

static uint64_t
bp_period(const struct sched *s)
{
	return 2ull * s->l;
}

/* The hypercube's steps: the periodic stretch ends there. */
static uint64_t
bp_vsteps(const struct sched *s)
{
	struct bp p;

	bp_init(&p, s->n, s->k);
	return p.vsteps;
}

/* The first transfer at a step >= from, looking at O(l) steps: once a
 * whole period of the periodic stretch held none, none comes before its
 * end. */
static bool
bp_next(const struct sched *s, uint64_t from, uint64_t *step,
	struct sched_xfer *out, bool send)
{
	uint64_t quiet = from > bp_head(s) ? from : bp_head(s);
	uint64_t period = bp_period(s), vsteps = bp_vsteps(s), j;

	for (j = from; j < s->steps; j++) {
		if (xfer_at(s, j, send, out)) {
			*step = j;
			return true;
		}
		/* [quiet, j] held nothing: a period or more, all periodic */
		if (j + 1 >= quiet + period && j + 1 < vsteps)
			j = vsteps - 1;
	}
	return false;
}

static bool
next_xfer(const struct sched *s, uint64_t from, uint64_t *step,
	  struct sched_xfer *out, bool send)
{
	uint64_t j;

	if (s->racked)
		return hy_next(s, from, send, false, step, out);
	if (s->alg == SCHED_BINOMIAL)
		return bp_next(s, from, step, out, send);
	for (j = skip_idle(s, from, send); j < s->steps; j++) {
		if (xfer_at(s, j, send, out)) {
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

/* The last step in [lo, hi) at which this member sends to (receives
 * from) peer. */
static bool
bp_scan_back(const struct sched *s, uint32_t peer, bool send, uint64_t lo,
	     uint64_t hi, uint64_t *step)
{
	struct sched_xfer x;
	uint64_t j;

	for (j = hi; j-- > lo;) {
		if (xfer_at(s, j, send, &x) && x.peer == peer) {
			*step = j;
			return true;
		}
	}
	return false;
}

/* Binomial pipeline: the final step and the last period before it hold
 * the last transfer with the peer if the periodic stretch holds any
 * (see bp_head); else it is among the first bp_head() steps, or there
 * is none.  O(l) steps looked at. */
static bool
bp_last_with(const struct sched *s, uint32_t peer, bool send, uint64_t *step)
{
	uint64_t head = bp_head(s), period = bp_period(s);
	uint64_t vsteps = bp_vsteps(s), tail = 0;

	if (vsteps >= head + period)
		tail = vsteps - period;
	if (bp_scan_back(s, peer, send, tail, s->steps, step))
		return true;
	return bp_scan_back(s, peer, send, 0, tail < head ? tail : head, step);
}

static bool
last_at(uint64_t v, uint64_t *step)
{
	*step = v;
	return true;
}

/* Across racks: from the table's peers, O(log peers). */
static bool
hy_last_with(const struct sched *s, uint32_t peer, bool send, uint64_t *step)
{
	const struct hy_peer *e = hy_peer_of(&s->hy, peer);

	if (e == NULL || !(send ? e->sends : e->recvs))
		return false;
	return last_at(send ? e->last_send : e->last_recv, step);
}

bool
sched_last_with(const struct sched *s, uint32_t peer, bool send,
		uint64_t *step)
{
	uint64_t t;

	if (s->steps == 0 || peer >= s->n || peer == s->rank)
		return false;
	if (s->racked)
		return hy_last_with(s, peer, send, step);
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
			       peer == s->rank - (1u << bp_log2(s->rank)) &&
			       last_at((bp_log2(s->rank) + 1) * s->k - 1,
				       step);
		if (peer <= s->rank)
			return false;
		t = bp_log2(peer - s->rank);
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

	bp_init(&p, n, 4ull * bp_log2(n) + 4);
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
		out->peer = rank - (1u << bp_log2(rank));
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
			EMIT(s->rank - (1u << bp_log2(s->rank)));
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

/* Across racks: the table's peers, ascending. */
static size_t
hy_peers(const struct sched *s, uint32_t *out, size_t max)
{
	size_t i;

	for (i = 0; i < s->hy.npeers && i < max; i++)
		out[i] = s->hy.peers[i].rank;
	return s->hy.npeers;
}

size_t
sched_peers(const struct sched *s, uint32_t *out, size_t max)
{
	if (s->steps == 0)
		return 0;
	if (s->racked)
		return hy_peers(s, out, max);
	if (s->alg == SCHED_BINOMIAL)
		return bp_peers(s, out, max);
	return simple_peers(s, out, max);
}

/* Receives sched_main_source looks at: the binomial pipeline's pattern
 * repeats every few steps. */
#define MAIN_SOURCE_LOOK 256u
#define MAIN_SOURCE_PEERS 64u

bool
sched_main_source(const struct sched *s, uint32_t *peer)
{
	uint32_t peers[MAIN_SOURCE_PEERS];
	uint64_t cnt[MAIN_SOURCE_PEERS] = { 0 }, step = 0, got = 0;
	size_t np = sched_peers(s, peers, MAIN_SOURCE_PEERS), j;
	struct sched_xfer x;

	if (np > MAIN_SOURCE_PEERS)
		return false;
	while (got < MAIN_SOURCE_LOOK && sched_next_recv(s, step, &step, &x)) {
		for (j = 0; j < np && peers[j] != x.peer; j++)
			;
		if (j < np)
			cnt[j]++;
		got++;
		step++;
	}
	for (j = 0; j < np; j++)
		if (got > 0 && 2 * cnt[j] >= got) {
			*peer = peers[j];
			return true;
		}
	return false;
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

uint64_t
sched_total_steps(enum sched_alg alg, uint32_t n, uint64_t k)
{
	struct sched *s = NULL;
	uint64_t steps = 0;

	if (n > 0 && n <= SCHED_MAX_MEMBERS && sched_new(alg, n, 0, k, &s) == 0)
		steps = sched_steps(s);
	sched_free(s);
	return steps;
}
