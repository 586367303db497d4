/* SPDX-License-Identifier: MIT */
/*
 * slow - which members of a running group are much slower than the
 * others, and whether starting again without them in relay positions
 * pays (pure: no I/O).
 *
 * Each member measures the wire time of the blocks it receives (from
 * their first bytes to their last: what the links between it and its
 * senders allow) and reports the median of its last ones.  A member
 * whose median is SLOW_FACTOR times the group's is slow.  In a binomial
 * pipeline every member relays, so one slow member sets everyone's pace
 * while the others still receive most blocks at their own links' speed
 * from their fast neighbours; in a chain the member after a slow one
 * receives everything through the slow one's link, so it cannot be told
 * from it: it may be slow (and as each slow member makes two look slow,
 * a chain's typical time is the lower quartile of the times, not their
 * median).  And a slow member's link is busy: it takes
 * blocks (its pace, blocks per second between its last two reports) about
 * as fast as its link passes them, at least 1/SLOW_BUSY of its block
 * time's rate.  A member whose link idles between blocks waits for what
 * feeds it (in a chain, the sender's link maybe); its block times only
 * say that its link passes bursts faster than the data comes.
 */
#ifndef RDMCP_SLOW_H
#define RDMCP_SLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A member is slow when its median block time is SLOW_FACTOR times the
 * group's median and SLOW_GAP times the slowest of the others' (those
 * under that factor), and the others' times bunch within SLOW_BUNCH of
 * the fastest.  On links paced at their rate, as NICs are, the others'
 * times bunch together and the slow ones stand apart; on a link that
 * passes a short burst faster than its rate (a token bucket), each
 * member's time depends on how long its link was idle before, the times
 * spread over a range, and nobody is called slow. */
#define SLOW_FACTOR 2.5
#define SLOW_GAP 2.0
#define SLOW_BUNCH 2.0

/* A slow member takes blocks at least 1/SLOW_BUSY as fast as its block
 * time says its link passes them (its link idles a third of the time at
 * most). */
#define SLOW_BUSY 1.5

/* Nobody is judged before every member holds this many blocks. */
#define SLOW_MIN_HELD 16

/* Starting again must save this much at least. */
#define SLOW_MIN_GAIN_US 200000

struct slow_group {
	size_t n;		/* members running, in rank order */
	const uint64_t *block_us;	/* each one's median block time, 0:
					 * not known yet */
	const uint64_t *held;	/* blocks each one holds */
	const double *pace;	/* each one's blocks per second between its
				 * last two reports, 0: not known yet */
	uint64_t blocks;	/* in the transfer */
	uint64_t restart_us;	/* what starting again costs before the
				 * first block flows */
	bool chain;		/* the members form a chain in this order */
	bool head;		/* ... and member 0 is its head, fed by the
				 * sender (not a member after one done) */
	/* Optional (NULL: not known): for each member, the one (by index
	 * here) that sends it half its blocks or more, or SLOW_NO_FEEDER
	 * (the sender, a member not running, or no such one). */
	const size_t *feeder;
	/* Optional (NULL: none): members done already (in a chain, those
	 * before the others, which got every block).  Their times count
	 * towards the group's typical time; they are judged no further:
	 * never slow, nor held back, and their pace need not be known. */
	const bool *done;
};

#define SLOW_NO_FEEDER SIZE_MAX

enum slow_verdict {
	SLOW_NO,
	SLOW_MAYBE,	/* slow blocks, but in a chain after a slow one,
			 * fed half its blocks or more by a slower one,
			 * or not clear of the others' */
	SLOW_YES,
};

/* Judge each member of g into v[i], and say whether starting again with
 * the slow ones last, after the others in a chain (those that may be
 * slow just before them), is expected to end the others' copies sooner,
 * by a quarter and SLOW_MIN_GAIN_US at least, than going on (never for
 * fewer than 2 blocks per member).  Returns the number of slow
 * members if it does, 0 if not (or not known yet: some member's time is
 * not), -ENOMEM.  *median_us gets the group's median block time (in a
 * chain the lower quartile; 0 if
 * not known). */
ssize_t slow_find(const struct slow_group *g, enum slow_verdict *v,
		  uint64_t *median_us);

/* A member found slow and sent again last, in a chain (fastest of the
 * slow ones first, so each receives from one no slower than itself):
 * SLOW_YES if its copy took SLOW_CONFIRM times as long as the last of
 * the others' (own_s, others_s seconds; others_s 0: none ended), SLOW_NO
 * if it ended with them.  Block times cannot say: on a link that passes
 * bursts faster than its rate they depend on how long it was idle, and
 * that a chain's members ended together can. */
#define SLOW_CONFIRM 1.5
enum slow_verdict slow_confirm(double own_s, double others_s);

#endif
