/* SPDX-License-Identifier: MIT */
/*
 * engine - one member's schedule over a transport (see engine.h).
 */
#include "engine/engine_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

bool
eng_bit_is_set(const uint8_t *map, uint64_t b)
{
	return (map[b / 8] >> (b % 8)) & 1;
}

void
eng_bit_set(uint8_t *map, uint64_t b)
{
	map[b / 8] |= (uint8_t)(1u << (b % 8));
}

void
eng_bit_clear(uint8_t *map, uint64_t b)
{
	map[b / 8] &= (uint8_t)~(1u << (b % 8));
}

bool
eng_is_held(const struct eng *e, uint64_t b)
{
	return e->cfg.rank == 0 || eng_bit_is_set(e->held, b);
}

bool
eng_can_send(const struct eng *e, uint64_t b)
{
	return eng_is_held(e, b) || (e->landing && e->landing_block == b);
}

bool
eng_runs_trickle(const struct eng *e)
{
	return e->cfg.admit_one && e->one_target &&
	       (e->cut_through || e->cfg.rate > 0);
}

bool
eng_can_offer(const struct eng *e, uint64_t b)
{
	uint32_t i;

	if (eng_can_send(e, b))
		return true;
	for (i = 0; e->cut_through && i < e->nadmitted; i++)
		if (e->admitted[i].block == b)
			return true;
	return false;
}

void
eng_set_held(struct eng *e, uint64_t b)
{
	eng_bit_set(e->held, b);
	e->nheld++;
}

struct epeer *
eng_find_peer(struct eng *e, uint32_t rank)
{
	size_t lo = 0, hi = e->npeers, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (e->peers[mid].rank == rank)
			return &e->peers[mid];
		if (e->peers[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
eng_fail(struct eng *e, int status, uint32_t peer)
{
	if (e->failed || e->finished)
		return;
	e->failed = true;
	log_debug("engine rank %u: failed (%s, peer %d)", e->cfg.rank,
		  strerror(-status), peer == ENG_NO_PEER ? -1 : (int)peer);
	e->cfg.done(e->cfg.ctx, status, peer);
}

/* The memory of block b in e->iov; returns the entry count or -errno. */
static int
block_iov(struct eng *e, uint64_t b)
{
	int n;

	for (;;) {
		n = e->cfg.io.iov(e->cfg.io.ctx, b, e->iov, e->iov_cap);
		if (n <= e->iov_cap)
			return n;
		free(e->iov);
		e->iov = malloc((size_t)n * sizeof(*e->iov));
		e->iov_cap = e->iov != NULL ? n : 0;
		if (e->iov == NULL)
			return -ENOMEM;
	}
}

/* ---------------------------------------------------------------------
 * Moving blocks
 */

static int
post_one_receive(struct eng *e, struct epeer *p)
{
	uint64_t b = e->recv.block;
	int n, rc;

	n = block_iov(e, b);
	if (n < 0)
		return n;
	rc = xp_post_recv(e->cfg.xp, p->rank, e->iov, n, b);
	if (rc < 0)
		return rc;
	if (e->cfg.admit_one) {	/* no READY: the grant says it */
		e->pend[e->npend++] = (struct epend){
			.step = e->recv_step, .block = b, .peer = p->rank,
			.offered = eng_bit_is_set(e->offered, b) };
	} else {
		if (e->recv_at != NULL)
			e->recv_at[b] = trace_now();
		rc = xp_signal(e->cfg.xp, p->rank,
			       SIG_READY << SIG_KIND_SHIFT | b);
		if (rc < 0)
			return rc;
	}
	p->posted++;
	e->posted++;
	e->has_recv = false;
	e->recv_from = e->recv_step + 1;
	return 0;
}

static int
post_receives(struct eng *e)
{
	struct epeer *p;
	int rc;

	while (e->posted < e->window && !e->recvs_over) {
		if (!e->has_recv && !eng_next_recv(e, e->recv_from,
						   &e->recv_step, &e->recv)) {
			e->recvs_over = true;
			return 0;
		}
		e->has_recv = true;
		p = eng_find_peer(e, e->recv.peer);
		if (p == NULL || !p->up)
			return 0;
		rc = post_one_receive(e, p);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static uint64_t
iov_bytes(const struct iovec *iov, int n)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

static void on_kick(uv_timer_t *t);

/* Send block b, landing now (cut_through), to p from e->iov[0..n). */
static int
send_landing(struct eng *e, struct epeer *p, int n, uint64_t b)
{
	int rc = xp_send_landing(e->cfg.xp, p->rank, e->iov, n, (uint32_t)b,
				 b, e->landing_from, b);

	if (rc == 0)
		log_trace("rank %u: block %llu goes on as it lands",
			  e->cfg.rank, (unsigned long long)b);
	return rc;
}

/* Send `es` to p, which is ready for it and whose block we hold. */
static int
send_one(struct eng *e, struct epeer *p, struct esend *es)
{
	uint64_t b = es->x.block;
	int n, rc;

	if (e->cfg.admit_one)
		goto ready;	/* granted: the receive is posted */
	if (p->ready[p->rhead] != b) {
		log_warn("rank %u is ready for block %llu, expected %llu",
			 p->rank, (unsigned long long)p->ready[p->rhead],
			 (unsigned long long)b);
		return -EPROTO;
	}
	p->rhead = (p->rhead + 1) % p->rcap;
	p->rcount--;
ready:
	n = block_iov(e, b);
	if (n < 0)
		return n;
	rc = eng_span_send_begins(e, p);
	if (rc == 0)
		rc = eng_is_held(e, b) ? xp_send(e->cfg.xp, p->rank, e->iov, n,
						 (uint32_t)b, b)
				       : send_landing(e, p, n, b);
	if (rc < 0)
		return rc;
	eng_span_wait_ends(e, p->rank, b);
	log_trace("rank %u: step %llu: send block %llu to %u", e->cfg.rank,
		  (unsigned long long)es->step, (unsigned long long)b, p->rank);
	p->inflight++;
	e->inflight++;
	e->bytes_sent += iov_bytes(e->iov, n);
	eng_rate_charge(e, iov_bytes(e->iov, n));
	if (e->cfg.admit_one && !es->follows) {	/* a run: one NEARLY */
		p->unconfirmed++;
		e->unconfirmed++;
	}
	es->issued = true;
	if (es->step == p->last_send)
		p->sends_issued = true;
	return 0;
}

struct esend *
eng_sendq_at(struct eng *e, uint32_t i)
{
	return &e->sendq[(e->sq_head + i) % SENDQ_MAX];
}

/* How many sends the queue looks at.  Rank 0 sends in schedule order:
 * every block it sends late holds back all the members it reaches
 * through (to one peer alone, the order is the same either way, and runs
 * need the queue).  A member whose granted runs go out over time holds
 * the run going and the next one (SENDQ_MAX: eng_runs_trickle). */
static uint32_t
sendq_room(const struct eng *e)
{
	if (eng_runs_trickle(e))
		return SENDQ_MAX;
	return e->cfg.rank == 0 && !e->one_target ? 1 : SEND_AHEAD;
}

/* The queue of next sends: issued ones off its head, then filled up
 * from the schedule. */
static void
sendq_fill(struct eng *e)
{
	struct esend *es;

	while (e->sq_count > 0 && eng_sendq_at(e, 0)->issued) {
		e->sq_head = (e->sq_head + 1) % SENDQ_MAX;
		e->sq_count--;
	}
	while (e->sq_count < sendq_room(e) && !e->sched_sends_over) {
		es = eng_sendq_at(e, e->sq_count);
		if (!eng_next_send(e, e->send_from, &es->step, &es->x)) {
			e->sched_sends_over = true;
			break;
		}
		es->issued = es->offered = es->granted = es->follows = false;
		e->send_from = es->step + 1;
		e->sq_count++;
	}
	e->sends_over = e->sched_sends_over && e->sq_count == 0;
}

/* Can send i of the queue go now (or, `offer`, be offered)?  Not before
 * an earlier one to the same peer (the peer takes its blocks in order;
 * an offer may follow earlier ones offered, which only eng_make_offers
 * allows, where granted runs go out over time), and only to a peer that is
 * ready for it, with the block here (or landing: cut_through). */
struct epeer *
eng_sendable(struct eng *e, uint32_t i, bool offer)
{
	struct esend *es = eng_sendq_at(e, i), *before;
	struct epeer *p;
	uint32_t j;

	if (es->issued)
		return NULL;
	for (j = 0; j < i; j++) {
		before = eng_sendq_at(e, j);
		if (!before->issued && before->x.peer == es->x.peer &&
		    !(offer && before->offered))
			return NULL;
	}
	p = eng_find_peer(e, es->x.peer);
	if (p == NULL || !p->up ||
	    !(offer ? eng_can_offer(e, es->x.block)
		    : eng_can_send(e, es->x.block)))
		return NULL;
	if (!e->cfg.admit_one && p->rcount == 0)
		return NULL;	/* not ready for it yet */
	return p;
}

/* Why the first send due cannot go (for the trace). */
static void
note_wait(struct eng *e)
{
	struct esend *es = eng_sendq_at(e, 0);
	struct epeer *p = eng_find_peer(e, es->x.peer);

	if (p != NULL && p->up && !eng_can_send(e, es->x.block))
		eng_span_wait(e, TR_WAIT_BLOCK);
	else
		eng_span_wait(e, TR_WAIT_READY);
}

/* The next send that may go, or NULL: the earliest sendable one (with
 * admit_one: the earliest granted one); *i is its place in the queue. */
static struct epeer *
next_to_send(struct eng *e, uint32_t *i)
{
	struct epeer *p;

	for (*i = 0; *i < e->sq_count; (*i)++) {
		if (e->cfg.admit_one && !eng_sendq_at(e, *i)->granted)
			continue;
		if ((p = eng_sendable(e, *i, false)) != NULL)
			return p;
	}
	return NULL;
}

/* Are max_sends sends in flight (with admit_one: not yet nearly in)? */
static bool
link_taken(const struct eng *e)
{
	return e->cfg.max_sends && (e->cfg.admit_one ? e->unconfirmed
				    : e->inflight) >= e->cfg.max_sends;
}

/* Does send i go behind one already on its way (the rest of a run, or
 * the next run granted to our only peer), whatever the link? */
static bool
goes_behind(struct eng *e, uint32_t i)
{
	const struct esend *es = eng_sendq_at(e, i);

	return es->follows ||
	       (es->granted && eng_sending_to(e, es->x.peer));
}

/* Issue what may go, earliest step first, at most max_sends in flight
 * (a granted run counting as one). */
static int
try_sends(struct eng *e)
{
	struct epeer *p;
	uint32_t i;
	int rc;

	for (;;) {
		sendq_fill(e);
		rc = e->cfg.admit_one ? eng_make_offers(e) : 0;
		if (rc < 0 || e->sends_over)
			return rc;
		p = next_to_send(e, &i);
		if (link_taken(e) && (p == NULL || !goes_behind(e, i)))
			return 0;	/* but the rest of a run goes on */
		if (p == NULL) {
			note_wait(e);
			return 0;
		}
		if (!eng_rate_allows(e))
			return 0;
		rc = send_one(e, p, eng_sendq_at(e, i));
		if (rc < 0)
			return rc;
	}
}

/* Does the schedule still need the connection to p: blocks or ready
 * signals still to come from it, or sends to it not yet issued?  Sends in
 * flight do not count: a peer that got everything may close before their
 * completions come back to us. */
bool
eng_peer_needed(const struct eng *e, const struct epeer *p)
{
	uint64_t next_recv = e->has_recv ? e->recv_step : e->recv_from;

	if (p->posted > 0)
		return true;
	if (p->sends_to && !p->sends_issued)
		return true;
	return p->recvs_from && !e->recvs_over && p->last_recv >= next_recv;
}

/* Close, in order, the connections the schedule is done with: nothing to
 * send or receive on them any more, and no send of ours in flight. */
static void
finish_peers(struct eng *e)
{
	struct epeer *p;
	size_t i;

	for (i = 0; i < e->npeers; i++) {
		p = &e->peers[i];
		if (!p->up || p->inflight > 0 || p->unconfirmed > 0 ||
		    eng_peer_needed(e, p))
			continue;
		xp_finish(e->cfg.xp, p->rank);
		p->up = false;
		p->finished = true;
	}
}

static void
finish(struct eng *e)
{
	size_t i;

	e->finished = true;
	for (i = 0; i < e->npeers; i++)
		if (e->peers[i].up)
			xp_finish(e->cfg.xp, e->peers[i].rank);
	e->cfg.done(e->cfg.ctx, 0, ENG_NO_PEER);
}

void
eng_pump(struct eng *e)
{
	int rc;

	if (e->failed || e->finished)
		return;
	rc = post_receives(e);
	if (rc == 0)
		rc = eng_grant_next(e);
	if (rc == 0)
		rc = try_sends(e);
	if (rc < 0) {
		eng_fail(e, rc, ENG_NO_PEER);
		return;
	}
	finish_peers(e);
	if (e->nheld == e->k && !e->completed) {
		e->completed = true;
		if (e->cfg.rank != 0)
			e->cfg.complete(e->cfg.ctx);
	}
	if (e->completed && e->sends_over && e->inflight == 0 && !e->failed)
		finish(e);
}

/* Does the schedule have us exchange any block with p? */
static bool
has_transfers(const struct epeer *p)
{
	return p->sends_to || p->recvs_from;
}

/* ---------------------------------------------------------------------
 * Connection deadline
 */

static void
on_connect_deadline(uv_timer_t *t)
{
	struct eng *e = t->data;
	size_t i;

	if (e->failed || e->finished)
		return;
	for (i = 0; i < e->npeers; i++) {
		if (!e->peers[i].up && !e->peers[i].closed &&
		    !e->peers[i].finished && has_transfers(&e->peers[i])) {
			eng_fail(e, ENG_NEVER_CONNECTED, e->peers[i].rank);
			return;
		}
	}
}

/* ---------------------------------------------------------------------
 * Life cycle
 */

static int
init_peers(struct eng *e)
{
	size_t i, n = sched_peers(e->s, NULL, 0);
	uint32_t *ranks;
	struct epeer *p;

	if (n == 0)
		return 0;
	ranks = malloc(n * sizeof(*ranks));
	e->peers = calloc(n, sizeof(*e->peers));
	if (ranks == NULL || e->peers == NULL) {
		free(ranks);
		return -ENOMEM;
	}
	sched_peers(e->s, ranks, n);
	for (i = 0; i < n; i++) {
		p = &e->peers[i];
		p->rank = ranks[i];
		p->sends_to = sched_last_with(e->s, p->rank, true,
					      &p->last_send);
		p->recvs_from = sched_last_with(e->s, p->rank, false,
						&p->last_recv);
	}
	e->npeers = n;
	free(ranks);
	return 0;
}

/* Once the transfers left out are known (have.c): do we send to one
 * neighbour alone, receive from one alone, and pass blocks on as they
 * land? */
static void
peer_roles(struct eng *e)
{
	size_t i, targets = 0, sources = 0;

	for (i = 0; i < e->npeers; i++) {
		targets += e->peers[i].sends_to;
		sources += e->peers[i].recvs_from;
	}
	e->one_target = targets == 1;
	e->one_source = sources == 1;
	e->cut_through = e->one_target && e->one_source && e->cfg.admit_one &&
			 e->cfg.cut_through && xp_can_send_landing(e->cfg.xp);
}

int
eng_new(const struct eng_cfg *cfg, struct eng **out)
{
	struct eng *e;
	int rc;

	*out = NULL;
	if (cfg->blocks > SIG_BLOCK_MASK)
		return -EFBIG;		/* block numbers beyond the signals' */
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->cfg = *cfg;
	e->k = cfg->blocks;
	rc = sched_new_racks(cfg->alg, cfg->n, cfg->rank, cfg->blocks,
			     cfg->racks, cfg->nracks, &e->s);
	if (rc < 0)
		goto fail;
	rc = init_peers(e);
	if (rc < 0)
		goto fail;
	rc = -ENOMEM;
	/* rank 0 holds every block: no bitmap to fill (k / 8 bytes) */
	if (cfg->rank != 0 && (e->held = calloc(e->k / 8 + 1, 1)) == NULL)
		goto fail;
	if (cfg->trace != NULL && cfg->rank != 0 &&
	    (e->recv_at = calloc(e->k ? e->k : 1, sizeof(*e->recv_at))) == NULL)
		goto fail;
	e->pend_cap = cfg->window ? cfg->window : ENG_DEFAULT_WINDOW;
	e->window = cfg->link_window ? eng_window_for(cfg->window, 0)
				     : e->pend_cap;
	if (cfg->admit_one &&
	    ((e->pend = calloc(e->pend_cap, sizeof(*e->pend))) == NULL ||
	     (e->offered = calloc(e->k / 8 + 1, 1)) == NULL))
		goto fail;
	rc = eng_have_init(e);
	if (rc < 0)
		goto fail;
	peer_roles(e);
	if (cfg->rank == 0)
		e->nheld = e->k;
	*out = e;
	return 0;
fail:
	e->cfg.xp = NULL;	/* still the caller's */
	eng_free(e);
	return rc;
}

static void
on_kick(uv_timer_t *t)
{
	eng_pump(t->data);
}

void
eng_pump_after(struct eng *e, uint64_t ms)
{
	uv_timer_start(&e->kick, on_kick, ms, 0);
}

void
eng_offers_after(struct eng *e, uint64_t ms)
{
	uv_timer_start(&e->offer_wait, on_kick, ms, 0);
}

int
eng_start(struct eng *e)
{
	size_t i;
	int rc;

	xp_set_events(e->cfg.xp, &eng_events, e);
	for (i = 0; i < e->npeers; i++) {
		if (e->peers[i].rank < e->cfg.rank ||
		    !has_transfers(&e->peers[i]))
			continue;	/* theirs to make, or not needed */
		rc = xp_connect(e->cfg.xp, e->peers[i].rank);
		if (rc < 0)
			return rc;
	}
	e->loop = e->cfg.loop;
	uv_timer_init(e->loop, &e->kick);
	uv_timer_init(e->loop, &e->connect_deadline);
	uv_timer_init(e->loop, &e->offer_wait);
	e->kick.data = e->connect_deadline.data = e->offer_wait.data = e;
	uv_timer_start(&e->kick, on_kick, 0, 0);
	if (e->cfg.connect_wait_ms > 0)
		uv_timer_start(&e->connect_deadline, on_connect_deadline,
			       e->cfg.connect_wait_ms, 0);
	return 0;
}

const char *
eng_strerror(int status)
{
	if (status == ENG_CLOSED_EARLY)
		return "connection closed before the transfer ended";
	if (status == ENG_NEVER_CONNECTED)
		return "never connected";
	return strerror(-status);
}

uint64_t
eng_held(const struct eng *e)
{
	return e->nheld;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t
eng_block_time_us(const struct eng *e)
{
	uint64_t t[ENG_BT_RING];
	uint32_t n = e->bt_count < ENG_BT_RING ? e->bt_count : ENG_BT_RING;

	if (n < 8)
		return 0;
	memcpy(t, e->bt_us, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_u64);
	return t[n / 2] > 0 ? t[n / 2] : 1;
}

unsigned
eng_window_for(unsigned window, uint64_t block_us)
{
	uint64_t ahead;

	if (window == 0)
		window = ENG_DEFAULT_WINDOW;
	ahead = block_us > 0 ? (ENG_AHEAD_US + block_us - 1) / block_us : 0;
	if (ahead < ENG_MIN_WINDOW)
		ahead = ENG_MIN_WINDOW;
	return ahead < window ? (unsigned)ahead : window;
}

uint64_t
eng_bytes_sent(const struct eng *e)
{
	return e->bytes_sent;
}

struct xp *
eng_xport(const struct eng *e)
{
	return e->cfg.xp;
}

static void
eng_release(struct eng *e)
{
	size_t i;

	for (i = 0; i < e->npeers; i++) {
		free(e->peers[i].ready);
		free(e->peers[i].sent_at);
		free(e->peers[i].lacks);
	}
	free(e->peers);
	free(e->held);
	free(e->had);
	free(e->offered);
	free(e->recv_at);
	free(e->pend);
	free(e->iov);
	sched_free(e->s);
	free(e);
}

static void
on_timer_closed(uv_handle_t *h)
{
	struct eng *e = h->data;

	if (--e->open_timers == 0)
		eng_release(e);
}

void
eng_free(struct eng *e)
{
	if (e == NULL)
		return;
	xp_free(e->cfg.xp);
	e->cfg.xp = NULL;
	e->failed = true;
	if (e->loop != NULL) {
		e->open_timers = 3;
		uv_close((uv_handle_t *)&e->kick, on_timer_closed);
		uv_close((uv_handle_t *)&e->connect_deadline, on_timer_closed);
		uv_close((uv_handle_t *)&e->offer_wait, on_timer_closed);
	} else
		eng_release(e);
}
