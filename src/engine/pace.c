/* SPDX-License-Identifier: MIT */
/*
 * pace - one block at a time on each of a member's links (engine.h,
 * admit_one; state in engine_int.h).
 *
 * A sender whose link is free OFFERs the first block it holds that the
 * schedule has it send (one offer out at a time, or, where members hold
 * blocks from the start, two when the first went out of schedule order
 * and has waited a while: eng_make_offers; and without waiting to hear that
 * the receive is posted: the grant says that); the receiver GRANTs one
 * offer at a time, once the receive is posted (rank 0's first: its link
 * is everyone's source), and says NEARLY when the block has all
 * but its last bytes in, which frees the sender's link and lets the
 * receiver grant its next.  A sender whose link was taken between its
 * offer and the grant DECLINEs, and the receiver grants another.  So each
 * link carries one block at a time, the next starting as the last one
 * ends: three or four signals and the block, per block.  A member that
 * sends to one neighbour alone (a chain's) offers the blocks it holds for
 * it as one run of up to RUN_MAX, which the receiver grants at once and
 * says NEARLY of once, at the run's last block: where blocks come faster
 * than a relay passes them on (the link is fast, the CPU is not) the
 * signals cost one round per run, not per block; where the relay keeps up
 * its runs are single blocks.  A member whose blocks all come from one
 * neighbour grants that neighbour's next run while the last is still
 * coming in, and the sender sends it right behind (eng_sending_to): between
 * two members that only feed each other no round trip separates runs.  A
 * member with one source and one target (a chain's relay, over a
 * transport that can: TCP) passes each block on as it lands
 * (cut_through: engine.c, xp_send_landing), and offers its target the
 * blocks its source has its grant for, before they come: the grant is
 * back by the time the block's first bytes are.  Such a relay, and a
 * member pacing its sends, offers its next run once the last is granted
 * (eng_runs_trickle, offer_out).
 *
 * Also the cap on what a member sends (cfg.rate, --bwlimit): each send
 * takes its bytes' share of time at the rate, and the next waits for it.
 */
#include <errno.h>
#include <string.h>

#include "engine/engine_int.h"
#include "util/log.h"
#include "proto/trace.h"
#include "transport/xport.h"

/* admit_one: block b is nearly in; false if it was not admitted (any
 * more). */
bool
eng_unadmit(struct eng *e, uint64_t b)
{
	bool last;
	uint32_t i;

	for (i = 0; i < e->nadmitted; i++) {
		if (e->admitted[i].block != b)
			continue;
		last = e->admitted[i].last;
		e->admitted[i] = e->admitted[--e->nadmitted];
		return last;
	}
	return false;
}

bool
eng_ungranted(const struct eng *e, uint64_t b)
{
	uint32_t i;

	for (i = 0; e->cfg.admit_one && i < e->npend; i++)
		if (e->pend[i].block == b)
			return true;
	return false;
}

/* Which offered receive to grant: the sender's first (rank 0: every
 * moment its link idles, the whole group loses), else the earliest in
 * schedule order.  A member whose blocks all come from one peer grants
 * that peer's next run while one is still coming in: no other sender
 * can collide with it on our link, and the sender need not wait a round
 * trip between runs (its link idled for one, per run: the 1 -> 1 push on
 * loopback spent a fifth of its time so).  e->npend if none is
 * offered. */
static uint32_t
pick_offer(const struct eng *e)
{
	uint32_t i, from0 = 0, others = 0, first = e->npend;

	if (e->one_source) {
		for (i = 0; i < e->nadmitted; i++)
			others += e->admitted[i].last;
		for (i = 0; i < e->npend && others < ONE_SOURCE_RUNS; i++)
			if (e->pend[i].offered)
				return i;
		return e->npend;
	}
	for (i = 0; i < e->nadmitted; i++) {	/* runs, not blocks */
		from0 += e->admitted[i].peer == 0 && e->admitted[i].last;
		others += e->admitted[i].peer != 0 && e->admitted[i].last;
	}
	for (i = 0; i < e->npend; i++) {
		if (!e->pend[i].offered)
			continue;
		if (e->pend[i].peer == 0 && from0 == 0)
			return i;
		if (e->pend[i].peer != 0 && others < ADMIT_MAX &&
		    first == e->npend)
			first = i;
	}
	return first;
}

/* How many of the pending receives from i on to grant as one run: those
 * offered together with pend[i], posted, in order. */
static uint32_t
run_from(const struct eng *e, uint32_t i)
{
	const struct epend *x = &e->pend[i];
	uint32_t n = 1;

	while (n < x->run && n < RUN_MAX && i + n < e->npend &&
	       e->pend[i + n].peer == x->peer &&
	       e->pend[i + n].block == x->block + n && e->pend[i + n].offered)
		n++;
	return n;
}

/* admit_one: while fewer than ADMIT_MAX runs are coming in, grant the
 * earliest receive (in schedule order) whose sender offered it, with the
 * rest of its run: our link takes one block (or run) at a time, but never
 * waits on a sender that cannot send yet while another could. */
int
eng_grant_next(struct eng *e)
{
	uint32_t i, j, n;
	int rc;

	if (!e->cfg.admit_one)
		return 0;
	i = pick_offer(e);
	if (i == e->npend)
		return 0;
	n = run_from(e, i);
	if (n > 1)
		log_trace("rank %u: grant blocks %llu to %llu from %u at once",
			  e->cfg.rank, (unsigned long long)e->pend[i].block,
			  (unsigned long long)(e->pend[i].block + n - 1),
			  e->pend[i].peer);
	if (e->one_source && e->nadmitted > 0)
		log_trace("rank %u: grant block %llu while %u are still coming "
			  "in", e->cfg.rank, (unsigned long long)e->pend[i].block,
			  e->nadmitted);
	rc = xp_signal(e->cfg.xp, e->pend[i].peer,
		       SIG_GRANT << SIG_KIND_SHIFT |
		       (n > 1 ? (uint64_t)n << SIG_COUNT_SHIFT : 0) |
		       e->pend[i].block);
	if (rc < 0)
		return rc;
	for (j = 0; j < n; j++) {
		e->pend[i + j].last = j + 1 == n;
		e->admitted[e->nadmitted++] = e->pend[i + j];
		if (e->recv_at != NULL)
			e->recv_at[e->pend[i + j].block] = trace_now();
	}
	memmove(&e->pend[i], &e->pend[i + n],
		(e->npend - i - n) * sizeof(*e->pend));
	e->npend -= n;
	return 0;
}

/* admit_one: `peer` can send us block b now.  Senders offer what they
 * hold without waiting for our receive to be posted: an offer that comes
 * first is remembered until it is. */
static int
offered_one(struct eng *e, uint32_t peer, uint64_t b, uint32_t run)
{
	uint32_t i;

	if (eng_is_held(e, b) || eng_bit_is_set(e->offered, b))
		return -EPROTO;		/* here already, or offered twice */
	for (i = 0; i < e->nadmitted; i++)
		if (e->admitted[i].block == b)
			return -EPROTO;	/* granted already */
	eng_bit_set(e->offered, b);
	for (i = 0; i < e->npend; i++) {
		if (e->pend[i].peer != peer || e->pend[i].block != b)
			continue;
		e->pend[i].offered = true;
		e->pend[i].run = run;
		return 0;
	}
	return 0;
}

/* admit_one: `peer` can send us `count` blocks from b on now. */
static int
offered(struct eng *e, uint32_t peer, uint64_t b, uint32_t count)
{
	uint32_t i;
	int rc;

	for (i = 0; i < count; i++)
		if ((rc = offered_one(e, peer, b + i, count - i)) < 0)
			return rc;
	return 0;
}

/* Do we send to `peer` alone, and is a block of ours on its way to it now
 * (sent, not yet nearly in)?  Then our next block for it may be offered
 * and granted before our link is free: the peer takes the two in order,
 * from us alone, and the round trip of offer and grant overlaps the block
 * before (a chain's every block).  A member that sends to several peers
 * waits for its link before it offers: a receiver that granted it would
 * wait too, while another sender could send (docs/performance.md, its
 * constants). */
static const struct epeer *
only_target(const struct eng *e, uint32_t peer)
{
	const struct epeer *target = NULL;
	size_t i;

	for (i = 0; i < e->npeers; i++) {
		if (!e->peers[i].sends_to)
			continue;
		if (e->peers[i].rank != peer)
			return NULL;
		target = &e->peers[i];
	}
	return target;
}

bool
eng_sending_to(const struct eng *e, uint32_t peer)
{
	const struct epeer *target = only_target(e, peer);

	return target != NULL && target->unconfirmed > 0;
}

/* How many sends from queue place i on to offer as one run: to the one
 * neighbour we send to, of consecutive blocks held here (or coming:
 * eng_can_offer). */
static uint32_t
run_to_offer(struct eng *e, uint32_t i)
{
	const struct esend *es = eng_sendq_at(e, i), *next;
	uint32_t n = 1;

	if (only_target(e, es->x.peer) == NULL)
		return 1;
	while (n < RUN_MAX && i + n < e->sq_count) {
		next = eng_sendq_at(e, i + n);
		if (next->x.peer != es->x.peer || next->offered ||
		    next->issued || next->x.block != es->x.block + n ||
		    !eng_can_offer(e, next->x.block))
			break;
		n++;
	}
	return n;
}

/* Is send es an offer still out: offered, not issued, and (where runs
 * go out over time: eng_runs_trickle) not granted yet?  There a granted
 * run does not hold back the offer of the next.  A relay passing blocks
 * on as they land offered the next run once the last one's final block
 * was going; a signal cannot overtake a block on its way, so the offer
 * reached the neighbour only as that block ended, and the grant came back
 * a round trip later, through the neighbour's queue of the data it
 * passes on: that long the relay's link idled, once a run.  A member whose granted runs all go at once
 * offers the next as they do (the offer passes the blocks queued before
 * it: conn_send_signal); with more than one neighbour, one offer is out
 * at a time (below). */
static bool
offer_out(const struct eng *e, const struct esend *es)
{
	return es->offered && !es->issued &&
	       !(es->granted && eng_runs_trickle(e));
}

/* How long an offer out of schedule order may hold back the head's: 8
 * of our blocks' wire times, ENG_OFFER_PATIENCE_MIN_MS at least, and
 * ENG_OFFER_PATIENCE_MS while they are not known.  Its receiver grants
 * it within a block or two where nothing waits in a cycle. */
static uint64_t
offer_patience_ms(const struct eng *e)
{
	uint64_t bt = eng_block_time_us(e), ms = 8 * bt / 1000;

	if (bt == 0)
		return ENG_OFFER_PATIENCE_MS;
	return ms > ENG_OFFER_PATIENCE_MIN_MS ? ms : ENG_OFFER_PATIENCE_MIN_MS;
}

/* May members of this group hold blocks from the start (a delta, a
 * resume: cfg.had, cfg.lacks)?  Only then has an offer out of schedule
 * order been seen to wait in a cycle. */
static bool
group_holds(const struct eng *e)
{
	return e->cfg.had != NULL || e->cfg.lacks != NULL;
}

/* How many sends from the head of the queue eng_make_offers may offer
 * now: all while no offer is out, none while the head's is, and, in a
 * group whose members hold blocks, the head alone once a later send's
 * has been out offer_patience_ms; until then none, with *wake_ms set to
 * the time left. */
static uint32_t
offerable(struct eng *e, uint64_t *wake_ms)
{
	uint64_t age, patience;
	struct esend *es;
	uint32_t i;

	*wake_ms = 0;
	for (i = 0; i < e->sq_count; i++) {
		es = eng_sendq_at(e, i);
		if (!offer_out(e, es))
			continue;
		if (i == 0 || !group_holds(e))
			return 0;
		age = uv_now(e->loop) - es->offered_ms;
		patience = offer_patience_ms(e);
		if (age >= patience)
			return 1;
		*wake_ms = patience - age;
		return 0;
	}
	return e->sq_count;
}

/* admit_one: offer the first send that could go, one offer at a time:
 * with offers out to several receivers, the first to grant took our link
 * and the others' grants were declined, each leaving a receiver idle for
 * a round trip and costing three signals (docs/performance.md, its
 * constants).  But where members hold blocks from the start, an offer
 * out of schedule order (a later send's, whose block came before the
 * head's) holds back the head's, our earliest send not issued, for
 * offer_patience_ms only.  A receiver grants only receives it has
 * posted, in schedule order and a window ahead: the later offer may wait
 * for the receiver's earlier blocks, they for senders whose one offer
 * waits the same way, and so on round a cycle (test_engine's
 * holders_with_small_windows).  The group's earliest transfer not done
 * is the head of its sender's queue, its block is there and its receiver
 * has it posted, every transfer before it being done: offered, it is
 * granted and sent, and the group moves on.  Without held blocks no
 * cycle was seen, and blocks from different neighbours landing out of
 * order over a network make out-of-order offers common: there a second
 * offer's grant met the first's in a DECLINE often enough to slow the
 * binomial pipeline (docs/performance.md, "The earliest send's offer"),
 * so the rule stays one offer out. */
int
eng_make_offers(struct eng *e)
{
	struct esend *es;
	uint64_t wake_ms;
	uint32_t i, j, n, m = offerable(e, &wake_ms);
	int rc;

	if (wake_ms > 0)
		eng_offers_after(e, wake_ms);
	for (i = 0; i < m; i++) {
		es = eng_sendq_at(e, i);
		if (es->offered || eng_sendable(e, i, true) == NULL)
			continue;
		if (e->unconfirmed >= e->cfg.max_sends &&
		    !eng_sending_to(e, es->x.peer))
			return 0;	/* busy: a grant would wait for our link */
		n = run_to_offer(e, i);
		rc = xp_signal(e->cfg.xp, es->x.peer,
			       SIG_OFFER << SIG_KIND_SHIFT |
			       (n > 1 ? (uint64_t)n << SIG_COUNT_SHIFT : 0) |
			       es->x.block);
		if (rc < 0)
			return rc;
		for (j = 0; j < n; j++) {
			eng_sendq_at(e, i + j)->offered = true;
			eng_sendq_at(e, i + j)->offered_ms = uv_now(e->loop);
		}
		return 0;
	}
	return 0;
}

/* The offered, ungranted send of block b to peer, or NULL. */
static struct esend *
offered_send(struct eng *e, uint32_t peer, uint64_t b)
{
	struct esend *es;
	uint32_t i;

	for (i = 0; i < e->sq_count; i++) {
		es = eng_sendq_at(e, i);
		if (es->x.peer == peer && es->x.block == b && !es->issued &&
		    es->offered && !es->granted)
			return es;
	}
	return NULL;
}

/* admit_one: `peer` granted `count` blocks from b on: those sends go,
 * unless our link is taken by another meanwhile; then the grant (of a
 * single block: runs go to our only neighbour, whose grants never wait)
 * is declined at once, for the peer to grant another sender, and the
 * block offered again later. */
static int
granted(struct eng *e, uint32_t peer, uint64_t b, uint32_t count)
{
	struct esend *run[RUN_MAX];	/* count <= RUN_MAX: eng_pace_signal */
	uint32_t j;

	for (j = 0; j < count; j++)
		if ((run[j] = offered_send(e, peer, b + j)) == NULL)
			return -EPROTO;		/* never offered */
	if (e->unconfirmed < e->cfg.max_sends || eng_sending_to(e, peer)) {
		for (j = 0; j < count; j++) {	/* go when our link is free, */
			run[j]->granted = true;	/* or behind our last run */
			run[j]->follows = j > 0;
		}
		return 0;
	}
	if (count > 1)
		return -EPROTO;
	run[0]->offered = false;
	return xp_signal(e->cfg.xp, peer, SIG_DECLINE << SIG_KIND_SHIFT | b);
}

/* admit_one: the sender of block b declined our grant: offered no more,
 * and not coming in. */
static int
declined(struct eng *e, uint32_t peer, uint64_t b)
{
	struct epend *x;
	uint64_t step = 0;
	uint32_t i;

	for (i = 0; i < e->nadmitted && e->admitted[i].block != b; i++)
		;
	if (i == e->nadmitted || e->npend == e->pend_cap)
		return -EPROTO;
	step = e->admitted[i].step;
	eng_unadmit(e, b);
	eng_bit_clear(e->offered, b);	/* it will be offered again */
	for (x = &e->pend[e->npend]; x > e->pend && x[-1].step > step; x--)
		x[0] = x[-1];	/* back in its place, in step order */
	*x = (struct epend){ .step = step, .block = b, .peer = peer };
	e->npend++;
	return 0;
}

/* The signals of admit_one: 0 once handled, 1 if it is not one of them,
 * or -errno. */
int
eng_pace_signal(struct eng *e, struct epeer *p, uint64_t kind, uint64_t block,
	    uint32_t count)
{
	if (count > RUN_MAX ||
	    (count > 1 && kind != SIG_OFFER && kind != SIG_GRANT))
		return -EPROTO;
	if (kind == SIG_READY)
		return 1;
	if (!e->cfg.admit_one)
		return -EPROTO;
	switch (kind) {
	case SIG_NEARLY:	/* our link is free for the next one */
		if (!p->sends_to || p->unconfirmed == 0)
			return -EPROTO;
		p->unconfirmed--;
		e->unconfirmed--;
		return 0;
	case SIG_OFFER:
		return p->recvs_from ? offered(e, p->rank, block, count)
				     : -EPROTO;
	case SIG_GRANT:
		return p->sends_to ? granted(e, p->rank, block, count)
				   : -EPROTO;
	case SIG_DECLINE:
		return p->recvs_from ? declined(e, p->rank, block) : -EPROTO;
	default:
		return -EPROTO;
	}
}

/* ---------------------------------------------------------------------
 * A cap on the bytes a member sends (cfg.rate, --bwlimit)
 */

/* With a rate cap: may a send go now?  If not, pump again when it may. */
bool
eng_rate_allows(struct eng *e)
{
	uint64_t now;

	if (e->cfg.rate == 0)
		return true;
	now = uv_hrtime();
	if (now >= e->rate_next)
		return true;
	eng_pump_after(e, (e->rate_next - now + 999999) / 1000000);
	return false;
}

/* A send of `bytes` went: the next waits for its share of time. */
void
eng_rate_charge(struct eng *e, uint64_t bytes)
{
	uint64_t now;

	if (e->cfg.rate == 0)
		return;
	now = uv_hrtime();
	if (e->rate_next < now)
		e->rate_next = now;	/* idle time earns no burst */
	e->rate_next += bytes * 1000000000ull / e->cfg.rate;
}
