/* SPDX-License-Identifier: MIT */
/*
 * events - what the engine does when its transport reports: a neighbour
 * connected or lost, a signal (ready, offer, grant, nearly in), a block
 * received, begun or nearly in, a send done (engine_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "util/log.h"
#include "transport/xport.h"

static void
on_connected(void *ctx, uint32_t peer, int status)
{
	struct eng *e = ctx;
	struct epeer *p = eng_find_peer(e, peer);

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
	eng_pump(e);
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
	struct epeer *p = eng_find_peer(e, peer);

	if (p == NULL || e->failed || e->finished)
		return;
	if (storage_error(status)) {
		eng_fail(e, status, ENG_NO_PEER);
		return;
	}
	p->up = false;
	p->closed = true;
	if (eng_peer_needed(e, p))
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
	struct epeer *p = eng_find_peer(e, peer);
	uint64_t block = value & SIG_BLOCK_MASK;
	uint32_t count = (uint32_t)(value >> SIG_COUNT_SHIFT & SIG_COUNT_MASK);
	int rc;

	if (e->failed || e->finished)
		return;
	if (count == 0)
		count = 1;
	if (p == NULL || block >= e->k || count > e->k - block) {
		eng_fail(e, -EPROTO, peer);
		return;
	}
	rc = eng_pace_signal(e, p, value >> SIG_KIND_SHIFT, block, count);
	if (rc != 1) {
		if (rc < 0)
			eng_fail(e, rc, peer);
		else
			eng_pump(e);
		return;
	}
	if (!p->sends_to) {
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
	eng_pump(e);
}

/* A block's wire time: from its first bytes to its last, as the link
 * between its sender and us allows (the last block, maybe short, is left
 * out). */
static void
note_wire_time(struct eng *e, struct epeer *p, uint64_t cookie)
{
	if (p->rx_begin == 0 || p->rx_cookie != cookie || cookie + 1 >= e->k)
		return;
	e->bt_us[e->bt_count++ % ENG_BT_RING] =
		(uv_hrtime() - p->rx_begin) / 1000;
	p->rx_begin = 0;
	if (e->cfg.link_window)
		e->window = eng_window_for(e->cfg.window,
					   eng_block_time_us(e));
}

static void
on_recv_done(void *ctx, uint32_t peer, uint64_t cookie, uint32_t imm)
{
	struct eng *e = ctx;
	struct epeer *p = eng_find_peer(e, peer);
	int rc;

	if (e->failed || e->finished)
		return;
	/* a block not granted yet (admit_one) would leave its receive
	 * pending while a new one is posted: more pending than pend has
	 * room for */
	if (p == NULL || (uint32_t)cookie != imm || eng_is_held(e, cookie) ||
	    eng_ungranted(e, cookie)) {
		eng_fail(e, -EPROTO, peer);
		return;
	}
	p->posted--;
	e->posted--;
	if (e->landing && e->landing_block == cookie)
		e->landing = false;
	eng_set_held(e, cookie);
	note_wire_time(e, p, cookie);
	if (eng_unadmit(e, cookie)) {	/* in, with no word it was near */
		rc = xp_signal(e->cfg.xp, peer,
			       SIG_NEARLY << SIG_KIND_SHIFT | cookie);
		if (rc < 0) {
			eng_fail(e, rc, peer);
			return;
		}
	}
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
	eng_pump(e);
}

static void
on_send_done(void *ctx, uint32_t peer, uint64_t cookie, int status)
{
	struct eng *e = ctx;
	struct epeer *p = eng_find_peer(e, peer);

	if (e->failed || e->finished || p == NULL)
		return;
	p->inflight--;
	e->inflight--;
	eng_span_send_ends(e, p, cookie);
	log_trace("rank %u: block %llu to %u sent", e->cfg.rank,
		  (unsigned long long)cookie, peer);
	if (status < 0 && !(p->closed && !eng_peer_needed(e, p))) {
		eng_fail(e, status, peer);
		return;
	}
	eng_pump(e);
}

/* The block admitted is coming: its wire time starts now; tracing, the
 * receive span starts, the wait for its sender ends. */
static void
on_recv_begins(void *ctx, uint32_t peer, uint64_t cookie)
{
	struct eng *e = ctx;
	struct epeer *p = eng_find_peer(e, peer);
	uint64_t now;

	if (!e->failed && !e->finished && eng_ungranted(e, cookie)) {
		eng_fail(e, -EPROTO, peer);	/* sent before its grant */
		return;
	}
	if (p != NULL) {
		p->rx_begin = uv_hrtime();
		p->rx_cookie = cookie;
	}
	if (e->recv_at != NULL && cookie < e->k) {
		now = trace_now();
		trace_add(e->cfg.trace, TR_WAIT_SENDER, e->recv_at[cookie], now,
			  peer, cookie);
		e->recv_at[cookie] = now;
	}
	if (e->cut_through && p != NULL && !e->failed && !e->finished) {
		e->landing = true;	/* it may go on now */
		e->landing_block = cookie;
		e->landing_from = peer;
		eng_pump(e);
	}
}

static void
on_recv_nearly(void *ctx, uint32_t peer, uint64_t cookie)
{
	struct eng *e = ctx;

	int rc;

	if (e->failed || e->finished || !eng_unadmit(e, cookie))
		return;
	/* its sender may start its next one; we admit our next */
	rc = xp_signal(e->cfg.xp, peer, SIG_NEARLY << SIG_KIND_SHIFT | cookie);
	if (rc < 0) {
		eng_fail(e, rc, peer);
		return;
	}
	eng_pump(e);
}

const struct xp_events eng_events = {
	.connected = on_connected,
	.recv_done = on_recv_done,
	.recv_nearly = on_recv_nearly,
	.recv_begins = on_recv_begins,
	.send_done = on_send_done,
	.signal = on_signal,
	.lost = on_lost,
};
