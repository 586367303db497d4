/*
 * engine - one member's schedule over a transport (see engine.h).
 */
#include "engine.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Signals carry a kind in the top byte and a block number below. */
#define SIG_KIND_SHIFT 56
#define SIG_BLOCK_MASK ((1ull << SIG_KIND_SHIFT) - 1)
#define SIG_READY 1ull
#define MAX_READY_AHEAD 4096u

struct epeer {
	uint32_t rank;
	bool up;
	bool closed;		/* the connection ended */
	bool finished;		/* we are done with it: closed in order */
	uint32_t posted;	/* receives posted, not yet arrived */
	uint32_t inflight;	/* sends issued, not yet done */
	uint64_t *ready;	/* blocks the peer is ready for, in order */
	uint32_t rhead, rcount, rcap;
	uint64_t *sent_at;	/* tracing: when sends in flight began */
	uint32_t shead, scap;
	bool sends_to, recvs_from;
	uint64_t last_send, last_recv;	/* last steps with this peer */
};

struct eng {
	struct eng_cfg cfg;
	uv_loop_t *loop;
	uv_timer_t kick;	/* first pump, off the caller's stack */
	uv_timer_t connect_deadline;
	int open_timers;
	struct sched *s;
	uint64_t k;
	struct epeer *peers;	/* sorted by rank */
	size_t npeers;
	uint8_t *held;		/* bitmap of blocks held */
	uint64_t nheld;

	uint64_t send_from;	/* steps before this are issued */
	bool has_send;
	uint64_t send_step;
	struct sched_xfer send;
	bool sends_over;
	uint32_t inflight;

	uint64_t recv_from;
	bool recvs_over;
	bool has_recv;
	uint64_t recv_step;
	struct sched_xfer recv;
	uint32_t posted;

	struct iovec *iov;
	int iov_cap;
	bool completed, finished, failed;

	/* tracing (cfg.trace) */
	uint64_t *recv_at;	/* when the receive of each block was posted */
	uint64_t wait_since;	/* the next send waits, since then */
	enum trace_kind wait_kind;
};

static bool
is_held(const struct eng *e, uint64_t b)
{
	return (e->held[b / 8] >> (b % 8)) & 1;
}

static void
set_held(struct eng *e, uint64_t b)
{
	e->held[b / 8] |= (uint8_t)(1u << (b % 8));
	e->nheld++;
}

static struct epeer *
find_peer(struct eng *e, uint32_t rank)
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

static void
eng_fail(struct eng *e, int status, uint32_t peer)
{
	if (e->failed || e->finished)
		return;
	e->failed = true;
	log_debug("engine rank %u: failed (%s, peer %d)", e->cfg.rank,
		  strerror(-status), peer == ENG_NO_PEER ? -1 : (int)peer);
	e->cfg.done(e->cfg.ctx, status, peer);
}

/* ---------------------------------------------------------------------
 * Tracing: spans of receives, sends and waits (cfg.trace)
 */

/* A send to p begins now: its start, in p's ring of sends in flight. */
static int
trace_send_begins(struct eng *e, struct epeer *p)
{
	uint64_t *grown;
	uint32_t i;

	if (e->cfg.trace == NULL)
		return 0;
	if (p->inflight == p->scap) {
		grown = malloc((p->scap ? p->scap * 2 : 8) * sizeof(*grown));
		if (grown == NULL)
			return -ENOMEM;
		for (i = 0; i < p->inflight; i++)
			grown[i] = p->sent_at[(p->shead + i) % p->scap];
		free(p->sent_at);
		p->sent_at = grown;
		p->scap = p->scap ? p->scap * 2 : 8;
		p->shead = 0;
	}
	p->sent_at[(p->shead + p->inflight) % p->scap] = trace_now();
	return 0;
}

/* The oldest send in flight to p is out. */
static void
trace_send_ends(struct eng *e, struct epeer *p, uint64_t block)
{
	if (e->cfg.trace == NULL || p->scap == 0)
		return;
	trace_add(e->cfg.trace, TR_SEND, p->sent_at[p->shead], trace_now(),
		  p->rank, block);
	p->shead = (p->shead + 1) % p->scap;
}

/* The next send cannot go yet (kind says why): a wait begins, if none
 * was under way. */
static void
trace_wait(struct eng *e, enum trace_kind kind)
{
	if (e->cfg.trace != NULL && e->wait_since == 0) {
		e->wait_since = trace_now();
		e->wait_kind = kind;
	}
}

/* A send goes: the wait before it, if any, ends. */
static void
trace_wait_ends(struct eng *e, uint32_t peer, uint64_t block)
{
	if (e->cfg.trace == NULL || e->wait_since == 0)
		return;
	trace_add(e->cfg.trace, e->wait_kind, e->wait_since, trace_now(), peer,
		  block);
	e->wait_since = 0;
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
	if (e->recv_at != NULL)
		e->recv_at[b] = trace_now();
	rc = xp_signal(e->cfg.xp, p->rank, SIG_READY << SIG_KIND_SHIFT | b);
	if (rc < 0)
		return rc;
	p->posted++;
	e->posted++;
	e->has_recv = false;
	e->recv_from = e->recv_step + 1;
	return 0;
}

static int
post_receives(struct eng *e)
{
	unsigned window = e->cfg.window ? e->cfg.window : ENG_DEFAULT_WINDOW;
	struct epeer *p;
	int rc;

	while (e->posted < window && !e->recvs_over) {
		if (!e->has_recv && !sched_next_recv(e->s, e->recv_from,
						     &e->recv_step, &e->recv)) {
			e->recvs_over = true;
			return 0;
		}
		e->has_recv = true;
		p = find_peer(e, e->recv.peer);
		if (p == NULL || !p->up)
			return 0;
		rc = post_one_receive(e, p);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int
send_one(struct eng *e, struct epeer *p)
{
	uint64_t b = e->send.block;
	int n, rc;

	if (p->ready[p->rhead] != b) {
		log_warn("rank %u is ready for block %llu, expected %llu",
			 p->rank, (unsigned long long)p->ready[p->rhead],
			 (unsigned long long)b);
		return -EPROTO;
	}
	p->rhead = (p->rhead + 1) % p->rcap;
	p->rcount--;
	n = block_iov(e, b);
	if (n < 0)
		return n;
	rc = trace_send_begins(e, p);
	if (rc == 0)
		rc = xp_send(e->cfg.xp, p->rank, e->iov, n, (uint32_t)b, b);
	if (rc < 0)
		return rc;
	trace_wait_ends(e, p->rank, b);
	log_trace("rank %u: step %llu: send block %llu to %u", e->cfg.rank,
		  (unsigned long long)e->send_step, (unsigned long long)b,
		  p->rank);
	p->inflight++;
	e->inflight++;
	e->has_send = false;
	e->send_from = e->send_step + 1;
	return 0;
}

static int
try_sends(struct eng *e)
{
	struct epeer *p;
	int rc;

	while (!e->sends_over) {
		if (!e->has_send && !sched_next_send(e->s, e->send_from,
						     &e->send_step, &e->send)) {
			e->sends_over = true;
			break;
		}
		e->has_send = true;
		p = find_peer(e, e->send.peer);
		if (p != NULL && p->up && !is_held(e, e->send.block))
			trace_wait(e, TR_WAIT_BLOCK);
		else if (p == NULL || !p->up || p->rcount == 0)
			trace_wait(e, TR_WAIT_READY);
		if (p == NULL || !p->up || p->rcount == 0 ||
		    !is_held(e, e->send.block))
			return 0;
		rc = send_one(e, p);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Does the schedule still need the connection to p: blocks or ready
 * signals still to come from it, or sends to it not yet issued?  Sends in
 * flight do not count: a peer that got everything may close before their
 * completions come back to us. */
static bool
peer_needed(const struct eng *e, const struct epeer *p)
{
	uint64_t next_send = e->has_send ? e->send_step : e->send_from;
	uint64_t next_recv = e->has_recv ? e->recv_step : e->recv_from;

	if (p->posted > 0)
		return true;
	if (p->sends_to && !e->sends_over && p->last_send >= next_send)
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
		if (!p->up || p->inflight > 0 || peer_needed(e, p))
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

static void
pump(struct eng *e)
{
	int rc;

	if (e->failed || e->finished)
		return;
	rc = post_receives(e);
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
		    !e->peers[i].finished) {
			eng_fail(e, ENG_NEVER_CONNECTED, e->peers[i].rank);
			return;
		}
	}
}

/* ---------------------------------------------------------------------
 * Transport events
 */

static void
on_connected(void *ctx, uint32_t peer, int status)
{
	struct eng *e = ctx;
	struct epeer *p = find_peer(e, peer);

	if (e->failed || e->finished)
		return;
	if (p == NULL || p->up) {
		log_warn("unexpected connection from rank %u", peer);
		eng_fail(e, -EPROTO, peer);
		return;
	}
	if (status < 0) {
		eng_fail(e, status, peer);
		return;
	}
	p->up = true;
	pump(e);
}

/* Errors of the files blocks land in, which a transport reports as the
 * end of the connection the block came on: they are ours, not the
 * peer's. */
static bool
storage_error(int status)
{
	return status == -ENOSPC || status == -EDQUOT || status == -EIO ||
	       status == -EFBIG || status == -EROFS;
}

static void
on_lost(void *ctx, uint32_t peer, int status)
{
	struct eng *e = ctx;
	struct epeer *p = find_peer(e, peer);

	if (p == NULL || e->failed || e->finished)
		return;
	if (storage_error(status)) {
		eng_fail(e, status, ENG_NO_PEER);
		return;
	}
	p->up = false;
	p->closed = true;
	if (peer_needed(e, p))
		eng_fail(e, status < 0 ? status : ENG_CLOSED_EARLY, peer);
}

static int
ready_push(struct epeer *p, uint64_t block)
{
	uint64_t *grown;
	uint32_t i, cap;

	if (p->rcount == p->rcap) {
		if (p->rcap >= MAX_READY_AHEAD)
			return -EPROTO;
		cap = p->rcap ? p->rcap * 2 : 8;
		grown = malloc(cap * sizeof(*grown));
		if (grown == NULL)
			return -ENOMEM;
		for (i = 0; i < p->rcount; i++)
			grown[i] = p->ready[(p->rhead + i) % p->rcap];
		free(p->ready);
		p->ready = grown;
		p->rcap = cap;
		p->rhead = 0;
	}
	p->ready[(p->rhead + p->rcount) % p->rcap] = block;
	p->rcount++;
	return 0;
}

static void
on_signal(void *ctx, uint32_t peer, uint64_t value)
{
	struct eng *e = ctx;
	struct epeer *p = find_peer(e, peer);
	uint64_t block = value & SIG_BLOCK_MASK;
	int rc;

	if (e->failed || e->finished)
		return;
	if (p == NULL || value >> SIG_KIND_SHIFT != SIG_READY ||
	    block >= e->k || !p->sends_to) {
		eng_fail(e, -EPROTO, peer);
		return;
	}
	log_trace("rank %u: %u is ready for block %llu", e->cfg.rank, peer,
		  (unsigned long long)block);
	rc = ready_push(p, block);
	if (rc < 0) {
		eng_fail(e, rc, peer);
		return;
	}
	pump(e);
}

static void
on_recv_done(void *ctx, uint32_t peer, uint64_t cookie, uint32_t imm)
{
	struct eng *e = ctx;
	struct epeer *p = find_peer(e, peer);
	int rc;

	if (e->failed || e->finished)
		return;
	if (p == NULL || (uint32_t)cookie != imm || is_held(e, cookie)) {
		eng_fail(e, -EPROTO, peer);
		return;
	}
	p->posted--;
	e->posted--;
	set_held(e, cookie);
	if (e->recv_at != NULL)
		trace_add(e->cfg.trace, TR_RECV, e->recv_at[cookie],
			  trace_now(), peer, cookie);
	log_trace("rank %u: block %llu from %u arrived", e->cfg.rank,
		  (unsigned long long)cookie, peer);
	rc = e->cfg.io.arrived(e->cfg.io.ctx, cookie);
	if (rc < 0) {
		eng_fail(e, rc, ENG_NO_PEER);
		return;
	}
	pump(e);
}

static void
on_send_done(void *ctx, uint32_t peer, uint64_t cookie, int status)
{
	struct eng *e = ctx;
	struct epeer *p = find_peer(e, peer);

	if (e->failed || e->finished || p == NULL)
		return;
	p->inflight--;
	e->inflight--;
	trace_send_ends(e, p, cookie);
	log_trace("rank %u: block %llu to %u sent", e->cfg.rank,
		  (unsigned long long)cookie, peer);
	if (status < 0 && !(p->closed && !peer_needed(e, p))) {
		eng_fail(e, status, peer);
		return;
	}
	pump(e);
}

static const struct xp_events eng_events = {
	.connected = on_connected,
	.recv_done = on_recv_done,
	.send_done = on_send_done,
	.signal = on_signal,
	.lost = on_lost,
};

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

int
eng_new(const struct eng_cfg *cfg, struct eng **out)
{
	struct eng *e;
	int rc;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	e->cfg = *cfg;
	e->k = cfg->blocks;
	rc = sched_new(cfg->alg, cfg->n, cfg->rank, cfg->blocks, &e->s);
	if (rc < 0)
		goto fail;
	rc = init_peers(e);
	if (rc < 0)
		goto fail;
	rc = -ENOMEM;
	e->held = calloc(e->k / 8 + 1, 1);
	if (e->held == NULL)
		goto fail;
	if (cfg->trace != NULL && cfg->rank != 0 &&
	    (e->recv_at = calloc(e->k ? e->k : 1, sizeof(*e->recv_at))) == NULL)
		goto fail;
	if (cfg->rank == 0) {
		memset(e->held, 0xff, e->k / 8 + 1);
		e->nheld = e->k;
	}
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
	pump(t->data);
}

int
eng_start(struct eng *e)
{
	size_t i;
	int rc;

	xp_set_events(e->cfg.xp, &eng_events, e);
	for (i = 0; i < e->npeers; i++) {
		if (e->peers[i].rank < e->cfg.rank)
			continue;
		rc = xp_connect(e->cfg.xp, e->peers[i].rank);
		if (rc < 0)
			return rc;
	}
	e->loop = e->cfg.loop;
	uv_timer_init(e->loop, &e->kick);
	uv_timer_init(e->loop, &e->connect_deadline);
	e->kick.data = e->connect_deadline.data = e;
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
	}
	free(e->peers);
	free(e->held);
	free(e->recv_at);
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
		e->open_timers = 2;
		uv_close((uv_handle_t *)&e->kick, on_timer_closed);
		uv_close((uv_handle_t *)&e->connect_deadline, on_timer_closed);
	} else
		eng_release(e);
}
