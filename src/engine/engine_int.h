/* SPDX-License-Identifier: MIT */
/*
 * engine_int - what the parts of the engine share: its state, and the
 * calls between engine.c (the schedule run over a transport), pace.c
 * (one block at a time on each link: offers, grants, and the word that a
 * block is nearly in) and spans.c (the spans of --trace).  Not for other
 * modules.
 */
#ifndef RDMCP_ENGINE_INT_H
#define RDMCP_ENGINE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

/* Signals carry a kind in the top byte, a count in the next (OFFER and
 * GRANT: so many blocks from this one on, 0 meaning 1) and a block number
 * below. */
#define SIG_KIND_SHIFT 56
#define SIG_COUNT_SHIFT 48
#define SIG_COUNT_MASK 0xffull
#define SIG_BLOCK_MASK ((1ull << SIG_COUNT_SHIFT) - 1)
#define SIG_READY 1ull		/* receive posted: you may send this block
				 * (not with admit_one: a grant says it) */
#define SIG_NEARLY 2ull		/* paced: your block is nearly in */
#define SIG_OFFER 3ull		/* paced: I can send you this block now */
#define SIG_GRANT 4ull		/* paced: send it */
#define SIG_DECLINE 5ull	/* paced: I am busy after all: grant another */
#define MAX_READY_AHEAD 4096u

/* Sends looked at ahead of the first one still due: when its target is
 * not ready yet (it is still taking the block before), a later send to
 * another neighbour may go first, so that our link does not idle.  Sends
 * to one neighbour keep their order. */
#define SEND_AHEAD 8u

/* admit_one: runs granted at once, at most (see eng_grant_next); a
 * member whose blocks all come from one peer grants ONE_SOURCE_RUNS. */
#define ADMIT_MAX 1u
#define ONE_SOURCE_RUNS 2u

/* admit_one: a member that sends to one neighbour alone offers the blocks
 * it holds for it, up to this many, as one run: granted, sent back to
 * back and said nearly in once (a relay that fell behind catches up with
 * one round of signals, not one per block). */
#define RUN_MAX SEND_AHEAD

/* The send queue's room: a member whose runs go out over time looks two
 * runs ahead, so that the next run can be offered while the last is
 * still going (eng_runs_trickle). */
#define SENDQ_MAX (2 * RUN_MAX)

/* admit_one: blocks granted and not nearly in, at most: ADMIT_MAX runs
 * and rank 0's, or a single source's ONE_SOURCE_RUNS. */
#define ADMITTED_MAX \
	((ADMIT_MAX + 1 > ONE_SOURCE_RUNS ? ADMIT_MAX + 1 : ONE_SOURCE_RUNS) * \
	 RUN_MAX)

/* admit_one: a receive posted and not granted yet. */
struct epend {
	uint64_t step;
	uint64_t block;
	uint32_t peer;
	bool offered;		/* its sender can send it now */
	uint32_t run;		/* offered: with so many blocks from it on */
	bool last;		/* granted: the last of its run */
};

/* A send of the schedule, due or done. */
struct esend {
	uint64_t step;
	struct sched_xfer x;
	bool offered, granted;	/* admit_one */
	bool follows;		/* granted in a run, not its first */
	bool issued;
	uint64_t offered_ms;	/* uv_now() when offered */
};

struct epeer {
	uint32_t rank;
	bool up;
	bool closed;		/* the connection ended */
	bool finished;		/* we are done with it: closed in order */
	uint32_t posted;	/* receives posted, not yet arrived */
	uint32_t inflight;	/* sends issued, not yet done */
	uint32_t unconfirmed;	/* admit_one: sends it has not said are
				 * nearly in (SIG_NEARLY) */
	uint64_t *ready;	/* blocks the peer is ready for, in order */
	uint32_t rhead, rcount, rcap;
	uint64_t *sent_at;	/* tracing: when sends in flight began */
	uint32_t shead, scap;
	bool sends_to, recvs_from;
	uint64_t last_send, last_recv;	/* last steps with this peer */
	bool sends_issued;	/* every send to it is issued */
	uint64_t rx_begin;	/* uv_hrtime() the block coming began */
	uint64_t rx_cookie;	/* ... which block that is */
	uint8_t *lacks;		/* cfg.lacks: the blocks it lacks, the only
				 * ones it is sent; NULL: all */
};

/* Wire times of the last blocks received, for eng_block_time_us(). */
#define ENG_BT_RING 16u
/* How long an offer out of schedule order holds back the offer of the
 * earliest send (pace.c, offer_patience_ms): while the blocks' wire
 * times are not known, and at least (docs/performance.md, "The earliest
 * send's offer"). */
#define ENG_OFFER_PATIENCE_MS 100u
#define ENG_OFFER_PATIENCE_MIN_MS 20u

struct eng {
	struct eng_cfg cfg;
	uv_loop_t *loop;
	uv_timer_t kick;	/* first pump, off the caller's stack */
	uv_timer_t connect_deadline;
	uv_timer_t offer_wait;	/* an offer out of order has waited long
				 * enough (eng_make_offers) */
	int open_timers;
	struct sched *s;
	uint64_t k;
	struct epeer *peers;	/* sorted by rank */
	size_t npeers;
	bool one_target;	/* the schedule has us send to one peer */
	bool one_source;	/* ... and receive from one peer */
	bool cut_through;	/* both, and blocks pass on as they land */
	bool landing;		/* cut_through: a block is coming in now */
	uint64_t landing_block;	/* ... this one */
	uint32_t landing_from;	/* ... from this peer */
	uint8_t *held;		/* bitmap of blocks held (NULL for rank 0,
				 * which holds them all) */
	uint8_t *offered;	/* admit_one: blocks offered before their
				 * receive was posted */
	uint64_t nheld;
	uint8_t *had;		/* cfg.had: held from the start, never
				 * received (NULL: none) */
	uint64_t nhad;

	uint64_t send_from;	/* the schedule's sends from this step on are
				 * not in sendq yet */
	struct esend sendq[SENDQ_MAX];	/* the next sends, in step order */
	uint32_t sq_head, sq_count;
	bool sched_sends_over;	/* the schedule has no more to give */
	bool sends_over;	/* and every send is issued */
	uint32_t inflight;
	uint32_t unconfirmed;	/* admit_one: see epeer */
	uint64_t bytes_sent;	/* blocks handed to the transport */
	uint64_t rate_next;	/* cfg.rate: no send before (uv_hrtime) */

	uint64_t recv_from;
	bool recvs_over;
	bool has_recv;
	uint64_t recv_step;
	struct sched_xfer recv;
	uint32_t posted;

	/* admit_one: receives posted and not granted yet, in schedule
	 * order, and those granted whose blocks are not nearly in yet */
	struct epend *pend;
	uint32_t npend, pend_cap;
	uint32_t nadmitted;
	struct epend admitted[ADMITTED_MAX];

	struct iovec *iov;
	int iov_cap;
	bool completed, finished, failed;

	uint64_t bt_us[ENG_BT_RING];	/* wire times of recent blocks */
	uint32_t bt_count;		/* measured so far */
	unsigned window;		/* receives to post ahead now
					 * (eng_window_for) */

	/* tracing (cfg.trace) */
	uint64_t *recv_at;	/* when the receive of each block was posted */
	uint64_t wait_since;	/* the next send waits, since then */
	enum trace_kind wait_kind;
};

/* engine.c */

/* Bit b of a bitmap. */
bool eng_bit_is_set(const uint8_t *map, uint64_t b);
void eng_bit_set(uint8_t *map, uint64_t b);
void eng_bit_clear(uint8_t *map, uint64_t b);

/* Block b is here. */
bool eng_is_held(const struct eng *e, uint64_t b);

/* The neighbour of this rank, or NULL. */
struct epeer *eng_find_peer(struct eng *e, uint32_t rank);

/* The i-th send of the queue of next sends. */
struct esend *eng_sendq_at(struct eng *e, uint32_t i);

/* Does a run granted to our one neighbour go out over time, not at once:
 * we pass blocks on as they land (cut_through), or pace our sends
 * (cfg.rate)?  Then the next run is offered once the last is granted
 * (eng_make_offers), and the send queue holds both (SENDQ_MAX). */
bool eng_runs_trickle(const struct eng *e);

/* May block b go out now: here, or (cut_through) landing now? */
bool eng_can_send(const struct eng *e, uint64_t b);

/* May block b be offered now: it may go, or (cut_through) its sender
 * has our grant for it, so it comes next? */
bool eng_can_offer(const struct eng *e, uint64_t b);

/* The neighbour send i of the queue may go to now (ready for it, the
 * block may go (eng_can_send) or, with `offer`, be offered
 * (eng_can_offer), no earlier send to it due), or NULL. */
struct epeer *eng_sendable(struct eng *e, uint32_t i, bool offer);

/* Pump again in `ms` milliseconds (engine.c). */
void eng_pump_after(struct eng *e, uint64_t ms);

/* Pump again in ms, for eng_make_offers (a timer of its own: the rate's
 * wake-up on eng_pump_after must not be moved). */
void eng_offers_after(struct eng *e, uint64_t ms);

/* Post what receives the window allows, issue the sends that may go, and
 * finish when all is done; eng_fail()s on an error of the transport. */
void eng_pump(struct eng *e);

/* The member has failed (status, and the peer at fault or ENG_NO_PEER):
 * tell cfg.done, once. */
void eng_fail(struct eng *e, int status, uint32_t peer);

/* Block b has arrived: mark it held and count it. */
void eng_set_held(struct eng *e, uint64_t b);

/* Does this member still need peer p: blocks or signals to come from it,
 * or sends to it not yet issued? */
bool eng_peer_needed(const struct eng *e, const struct epeer *p);

/* have.c: what members held before the start (cfg.had, cfg.lacks) */

/* Copy cfg.had and each neighbour's cfg.lacks, and with either, work out
 * which neighbours we still send to and receive from (the peers' roles
 * and last steps).  After the peers are made; 0 or -ENOMEM. */
int eng_have_init(struct eng *e);

/* The schedule's next send (receive) from step `from` on that is not
 * left out: a block its target had (one we had).  As sched_next_send. */
bool eng_next_send(struct eng *e, uint64_t from, uint64_t *step,
		   struct sched_xfer *x);
bool eng_next_recv(struct eng *e, uint64_t from, uint64_t *step,
		   struct sched_xfer *x);

/* events.c: the transport's events, given to it by eng_start(). */
extern const struct xp_events eng_events;

/* pace.c: cfg.rate.  May a send go now?  If not, the engine is pumped
 * again when it may. */
bool eng_rate_allows(struct eng *e);

/* A send of `bytes` went: the next one waits for its share of time. */
void eng_rate_charge(struct eng *e, uint64_t bytes);

/* pace.c (with cfg.admit_one; see engine.h) */

/* Grant the next offered receive, while our link takes one: 0 or
 * -errno. */
int eng_grant_next(struct eng *e);

/* Offer the first send that could go now to its target, while no offer
 * is out, or, where members hold blocks, our earliest send once a later
 * one's has been out a while (pace.c, offer_patience_ms): 0 or
 * -errno. */
int eng_make_offers(struct eng *e);

/* Do we send to `peer` alone, with a run of ours to it not nearly in yet?
 * Then a granted send to it goes right behind that run, link or not. */
bool eng_sending_to(const struct eng *e, uint32_t peer);

/* Block b no longer comes in under a grant (nearly in, or in): true if it
 * was granted as the last (or only) block of its run, so that its sender
 * is to hear it is nearly in. */
bool eng_unadmit(struct eng *e, uint64_t b);

/* Is block b's receive posted and not granted yet?  Then its block may
 * not come: a sender sends only what it was granted. */
bool eng_ungranted(const struct eng *e, uint64_t b);

/* A signal of another kind than READY from p, about `count` blocks from
 * `block` on: 0 once handled, 1 if it is READY (the caller's), or
 * -errno. */
int eng_pace_signal(struct eng *e, struct epeer *p, uint64_t kind,
		uint64_t block, uint32_t count);

/* spans.c: spans of sends and of the waits before them (cfg.trace) */

/* A send to p begins now: 0 or -ENOMEM. */
int eng_span_send_begins(struct eng *e, struct epeer *p);

/* The oldest send in flight to p is out. */
void eng_span_send_ends(struct eng *e, struct epeer *p, uint64_t block);

/* The next send cannot go yet, for this reason: a wait begins (if none
 * is under way). */
void eng_span_wait(struct eng *e, enum trace_kind kind);

/* A send to peer goes: the wait before it, if any, ends. */
void eng_span_wait_ends(struct eng *e, uint32_t peer, uint64_t block);

#endif
