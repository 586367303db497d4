/* SPDX-License-Identifier: MIT */
/*
 * auto - the schedule and block size a push takes when none is asked for
 * (sched_auto_alg, sched_auto_block in schedule.h): from the size, the
 * group and what its links are.  Pure.
 */
#include "sched/schedule.h"

/* What a block costs besides its bytes (its frame, three signals and their
 * wake-ups on each member), as the bytes a network link could have
 * carried meanwhile, counted at a few hundred Mbit/s, where a push lasts
 * long enough for the choice to matter: in the binomial pipeline each
 * block waits on a round trip with a different neighbour, in the chain
 * (half the cost) offer and grant overlap the block before.  At 10 Gbit/s
 * and more the smaller blocks this picks cost milliseconds at most.
 * Fitted on the emulated clusters: docs/performance.md, its constants. */
#define AUTO_COST_NET (2u << 10)
#define AUTO_MIN_TCP (16u << 10)
#define AUTO_MIN_VERBS (256u << 10)	/* a block is a bounce slot too */
#define AUTO_MAX (1u << 20)
/* A chain over TCP passes each block on as it lands (cut-through): its
 * n - 2 hops of filling cost a few packets each, not a block's time,
 * whatever the block size, so the largest blocks lose least.  But the
 * slow-host rules judge a member only once it holds 16 blocks and has
 * timed 16: the file is cut into this many at least, so that they can
 * judge within its first eighth, which costs next to nothing.  Never
 * below AUTO_CUT_MIN: where 128 blocks would be smaller, the slow-host
 * rules have no time to act anyway, and each block's grant costs more
 * than its fill saves (figures: docs/performance.md, its constants). */
#define AUTO_CUT_MIN_BLOCKS 128u
#define AUTO_CUT_MIN (64u << 10)

/* A push of `total` bytes in blocks of b takes (total/b + fill) steps of
 * b/R + o: over one copy's time it loses total*cost/b + fill*b bytes' worth
 * (cost = o*R).  The loss of block size b, to compare sizes. */
static uint64_t
auto_loss(uint64_t total, uint64_t fill, uint64_t cost, uint64_t b)
{
	return (total + b - 1) / b * cost + fill * b;
}

uint32_t
sched_auto_block(enum sched_alg alg, uint64_t total, uint32_t n,
		 enum sched_link link)
{
	const uint64_t k = 1024;	/* any k: fill = steps - k */
	uint64_t fill, cost, b, best;

	/* Between members on this machine a link is a memory copy, so the fill
	 * costs little, and every block's fixed cost is CPU time that all the
	 * members share: the largest blocks (docs/performance.md, its
	 * constants). */
	if (alg == SCHED_TREE || alg == SCHED_SEQUENTIAL ||
	    link == SCHED_LINK_LOOPBACK)
		return AUTO_MAX;
	if (alg == SCHED_CHAIN && link == SCHED_LINK_NET) {
		for (b = AUTO_MAX; b > AUTO_CUT_MIN; b /= 2)
			if (total / b >= AUTO_CUT_MIN_BLOCKS)
				break;
		return (uint32_t)b;
	}
	fill = sched_total_steps(alg, n, k);
	fill = fill > k ? fill - k : 0;
	cost = alg == SCHED_CHAIN ? AUTO_COST_NET / 2 : AUTO_COST_NET;
	best = link == SCHED_LINK_VERBS ? AUTO_MIN_VERBS : AUTO_MIN_TCP;
	for (b = best * 2; b <= AUTO_MAX; b *= 2)
		if (auto_loss(total, fill, cost, b) <
		    auto_loss(total, fill, cost, best))
			best = b;
	return (uint32_t)best;
}

/* The chain is chosen where its fill costs at most a share of the time
 * that moves the data (sched_auto_alg).  Over a network its relays pass
 * blocks on as they land, so a hop costs a few packets, counted as
 * AUTO_CUT_HOP bytes of the link (on 10 Gbit/s links a hop's tens of
 * microseconds are tens of KB, which the rule, like the block size's,
 * does not know), and the share is half, where the binomial pipeline
 * over TCP starts to lose on small files.  Between processes of this
 * machine the members share its cores and nothing holds a chain's head
 * back: its first members race ahead and the later ones relay blocks
 * long gone from the caches, ending alone; the pipeline there, whatever
 * the size.  Figures: docs/performance.md, its constants. */
#define AUTO_CUT_HOP (8u << 10)
#define AUTO_CUT_FILL_SHARE 2u

enum sched_alg
sched_auto_alg(uint64_t bytes, uint32_t n, enum sched_link link)
{
	if (link != SCHED_LINK_NET || n < 3)
		return SCHED_BINOMIAL;
	return bytes >= AUTO_CUT_FILL_SHARE * AUTO_CUT_HOP * (n - 2)
		       ? SCHED_CHAIN : SCHED_BINOMIAL;
}
