/* SPDX-License-Identifier: MIT */
/*
 * xfer - RDMA verbs transport (see xv.h): memory, signals, blocks
 * and the transport's operations; peers and connections are peers.c's
 * (xv_int.h).
 */
#include "transport/verbs/xv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "util/net.h"
#include "util/wire.h"
#include "transport/verbs/xv_int.h"


/* ---------------------------------------------------------------------
 * Rings
 */

unsigned
xv_max_window(uint32_t block_size)
{
	unsigned w = RING_BUDGET / (block_size ? block_size : 1);

	return w < 2 ? 2 : w;
}

static int
ring_init(struct xv *x, struct ring *r, uint32_t nslots, uint32_t size,
	  struct rd_err *err)
{
	int rc;

	r->slot_size = size;
	r->len = (size_t)nslots * size;
	r->mem = mmap(NULL, r->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->mem == MAP_FAILED) {
		r->mem = NULL;
		return rd_errf(err, -ENOMEM, "cannot allocate %zu bytes of "
			       "RDMA buffers", r->len);
	}
	r->free = slots_new(nslots);
	if (r->free == NULL)
		return -ENOMEM;
	rc = vb_reg(x->dev, r->mem, r->len, IBV_ACCESS_LOCAL_WRITE, &r->mr,
		    err);
	return rc;
}

static void
ring_fini(struct ring *r)
{
	if (r->mr != NULL)
		ibv_dereg_mr(r->mr);
	if (r->mem != NULL)
		munmap(r->mem, r->len);
	slots_free(r->free);
	memset(r, 0, sizeof(*r));
}

static uint8_t *
ring_at(const struct ring *r, uint32_t slot)
{
	return r->mem + (size_t)slot * r->slot_size;
}

/* ---------------------------------------------------------------------
 * Signals: small sends under credits
 */

static int
post_sig_recv(struct vpeer *p, uint32_t i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(p->sigbuf + (size_t)i * MSG_LEN),
		.length = MSG_LEN, .lkey = p->sigmr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = vb_wr_id(p->sig.slot, i), .sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	return -ibv_post_recv(p->sig.id->qp, &wr, &bad);	/* 0 or errno */
}

int
xv_sig_buffers(struct vpeer *p, struct rd_err *err)
{
	uint32_t i;
	int rc;

	p->sigbuf = calloc(p->nsigbuf, MSG_LEN);
	if (p->sigbuf == NULL)
		return -ENOMEM;
	rc = vb_reg(p->x->dev, p->sigbuf, (size_t)p->nsigbuf * MSG_LEN,
		    IBV_ACCESS_LOCAL_WRITE, &p->sigmr, err);
	for (i = 0; rc == 0 && i < p->nsigbuf; i++)
		rc = post_sig_recv(p, i);
	return rc;
}

static int
post_msg(struct vpeer *p, uint8_t type, uint64_t value)
{
	uint8_t msg[MSG_LEN] = { type };
	struct ibv_sge sge = { .addr = (uintptr_t)msg, .length = MSG_LEN };
	struct ibv_send_wr wr = {
		.wr_id = vb_wr_id(p->sig.slot, TAG_SEND), .sg_list = &sge,
		.num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED,
	}, *bad;

	int rc;

	be_put32(msg + 4, slots_credit_piggyback(&p->cr));
	be_put64(msg + 8, value);
	rc = ibv_post_send(p->sig.id->qp, &wr, &bad);	/* 0 or errno */
	if (rc != 0)
		return -rc;
	vb_kick(p->x->dev);
	return 0;
}

/* Send queued signals while credits last; return credits if due. */
static int
flush_signals(struct vpeer *p)
{
	uint32_t cap = p->nsigbuf + 8;	/* the signal send queue */
	int rc;

	while (p->sigq_n > 0 && p->sig_posted < cap && slots_credit_take(&p->cr)) {
		rc = post_msg(p, MSG_SIGNAL, p->sigq[p->sigq_head]);
		if (rc < 0)
			return rc;
		p->sig_posted++;
		p->sigq_head = (p->sigq_head + 1) % p->sigq_cap;
		p->sigq_n--;
	}
	if (p->sigq_n == 0 && p->sig_posted < cap &&
	    slots_credit_update_due(&p->cr) && slots_credit_take_reserved(&p->cr)) {
		p->sig_posted++;
		return post_msg(p, MSG_CREDIT, 0);
	}
	return 0;
}

static int
queue_signal(struct vpeer *p, uint64_t value)
{
	uint64_t *grown;
	uint32_t i, cap;

	if (p->sigq_n == p->sigq_cap) {
		cap = p->sigq_cap ? p->sigq_cap * 2 : 16;
		grown = malloc(cap * sizeof(*grown));
		if (grown == NULL)
			return -ENOMEM;
		for (i = 0; i < p->sigq_n; i++)
			grown[i] = p->sigq[(p->sigq_head + i) % p->sigq_cap];
		free(p->sigq);
		p->sigq = grown;
		p->sigq_cap = cap;
		p->sigq_head = 0;
	}
	p->sigq[(p->sigq_head + p->sigq_n) % p->sigq_cap] = value;
	p->sigq_n++;
	return flush_signals(p);
}

static bool
wc_failed(struct vpeer *p, const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS)
		return false;
	if (!p->lost && !p->finishing) {
		log_warn("rdma: rank %u: %s", p->rank,
			 ibv_wc_status_str(wc->status));
		xv_emit_lost(p, -EIO);
	}
	return true;
}

void
xv_on_sig_wc(void *ctx, uint32_t tag, const struct ibv_wc *wc)
{
	struct vqp *q = ctx;
	struct vpeer *p = q->p;
	const uint8_t *msg;
	uint8_t type;
	uint64_t value;
	int rc;

	if (wc_failed(p, wc))
		return;
	if (tag == TAG_SEND) {
		/* its queue entry is free: signals may wait for it */
		p->sig_posted--;
		if (flush_signals(p) < 0)
			xv_emit_lost(p, -EIO);
		return;
	}
	if (tag >= p->nsigbuf)
		return;
	msg = p->sigbuf + (size_t)tag * MSG_LEN;
	type = msg[0];
	slots_credit_returned(&p->cr, be_get32(msg + 4));
	value = be_get64(msg + 8);
	rc = post_sig_recv(p, tag);
	if (rc == 0) {
		slots_credit_reposted(&p->cr);
		rc = flush_signals(p);
	}
	if (rc < 0 || wc->byte_len != MSG_LEN)
		xv_emit_lost(p, rc < 0 ? rc : -EPROTO);
	else if (type == MSG_SIGNAL)
		p->x->base.ev.signal(p->x->base.ctx, p->rank, value);
}

/* ---------------------------------------------------------------------
 * Blocks
 */

/* Post receive r: straight into its memory, sge[0..nsge) (xv_in_place),
 * when r->slot is UINT32_MAX, else into bounce slot r->slot. */
static int
post_block_recv(struct vpeer *p, struct xp_recv *r, struct ibv_sge *sge,
		int nsge)
{
	struct xv *x = p->x;
	struct ibv_recv_wr wr = { .sg_list = sge, .num_sge = nsge }, *bad;

	if (r->slot == UINT32_MAX) {
		wr.wr_id = vb_wr_id(p->data.slot, TAG_PLACED);
	} else {
		sge[0].addr = (uintptr_t)ring_at(&x->rring, r->slot);
		sge[0].length = x->rring.slot_size;
		sge[0].lkey = x->rring.mr->lkey;
		wr.num_sge = 1;
		wr.wr_id = vb_wr_id(p->data.slot, r->slot);
	}
	return -ibv_post_recv(p->data.id->qp, &wr, &bad);	/* 0 or errno */
}

static void
scatter(const uint8_t *src, const struct iovec *iov, int niov)
{
	int i;

	for (i = 0; i < niov; i++) {
		memcpy(iov[i].iov_base, src, iov[i].iov_len);
		src += iov[i].iov_len;
	}
}

static void
gather(uint8_t *dst, const struct iovec *iov, int niov)
{
	int i;

	for (i = 0; i < niov; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}

static void
on_block_arrived(struct vpeer *p, uint32_t tag, const struct ibv_wc *wc)
{
	struct xv *x = p->x;
	struct xp_recv *r = p->recvs.head;
	uint64_t cookie;

	if (r == NULL || (r->slot == UINT32_MAX ? TAG_PLACED : r->slot) != tag ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM) || wc->byte_len != r->len) {
		log_warn("rdma: rank %u sent an unexpected block", p->rank);
		xv_emit_lost(p, -EPROTO);
		return;
	}
	if (r->slot == UINT32_MAX) {
		x->stats.recv_placed += r->len;
	} else {
		scatter(ring_at(&x->rring, r->slot), r->iov, r->niov);
		slots_put(x->rring.free, r->slot);
		x->stats.recv_copied += r->len;
	}
	xp_recvq_pop(&p->recvs);
	cookie = r->cookie;
	free(r);
	x->base.ev.recv_done(x->base.ctx, p->rank, cookie,
			     ntohl(wc->imm_data));
}

static int
post_block_send(struct xv *x, struct psend *s)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr = {
		.wr_id = vb_wr_id(s->p->data.slot, TAG_SEND), .sg_list = sge,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(s->imm),
	}, *bad;
	uint64_t len = 0;
	int i, rc;

	for (i = 0; i < s->niov; i++)
		len += s->iov[i].iov_len;
	if (s->slot == UINT32_MAX) {
		wr.num_sge = xv_in_place(x, s->iov, s->niov, false, sge);
		x->stats.send_direct += len;
	} else {
		gather(ring_at(&x->sring, s->slot), s->iov, s->niov);
		sge[0].addr = (uintptr_t)ring_at(&x->sring, s->slot);
		sge[0].length = (uint32_t)len;
		sge[0].lkey = x->sring.mr->lkey;
		wr.num_sge = 1;
		x->stats.send_copied += len;
	}
	rc = ibv_post_send(s->p->data.id->qp, &wr, &bad);	/* 0 or errno */
	if (rc != 0)
		return -rc;
	vb_kick(x->dev);
	return 0;
}

/* Post the peer's queued sends while its send queue has room.  A send's
 * queue entry is free only once its completion is polled, which may come
 * after the receiver has already asked for more (its ready signals travel
 * on the other queue pair), so the engine's window does not bound it. */
static int
post_queued_sends(struct xv *x, struct vpeer *p)
{
	int rc;

	while (p->snext != NULL && p->nposted < x->sq_cap) {
		rc = post_block_send(x, p->snext);
		if (rc < 0)
			return rc;
		p->nposted++;
		p->snext = p->snext->next;
	}
	return 0;
}

/* Append a send to its peer's list and post it when there is room. */
static int
launch(struct xv *x, struct psend *s)
{
	struct vpeer *p = s->p;

	s->next = NULL;
	if (p->stail != NULL)
		p->stail->next = s;
	else
		p->shead = s;
	p->stail = s;
	if (p->snext == NULL)
		p->snext = s;
	return post_queued_sends(x, p);
}

/* Sends that waited for a bounce slot go out as slots free up. */
static void
launch_waiting(struct xv *x)
{
	struct psend *s;

	while ((s = x->whead) != NULL && slots_get(x->sring.free, &s->slot)) {
		x->whead = s->next;
		if (x->whead == NULL)
			x->wtail = NULL;
		if (launch(x, s) < 0)
			xv_emit_lost(s->p, -EIO);
	}
}

static void
on_block_sent(struct vpeer *p)
{
	struct xv *x = p->x;
	struct psend *s = p->shead;
	uint64_t cookie;

	if (s == NULL || s == p->snext)
		return;			/* not posted: cannot complete */
	p->shead = s->next;
	if (p->shead == NULL)
		p->stail = NULL;
	p->nposted--;
	if (s->slot != UINT32_MAX)
		slots_put(x->sring.free, s->slot);
	cookie = s->cookie;
	free(s);
	if (post_queued_sends(x, p) < 0) {
		xv_emit_lost(p, -EIO);
		return;
	}
	launch_waiting(x);
	x->base.ev.send_done(x->base.ctx, p->rank, cookie, 0);
}

void
xv_on_data_wc(void *ctx, uint32_t tag, const struct ibv_wc *wc)
{
	struct vqp *q = ctx;

	if (wc_failed(q->p, wc))
		return;
	if (tag == TAG_SEND)
		on_block_sent(q->p);
	else
		on_block_arrived(q->p, tag, wc);
}

/* ---------------------------------------------------------------------
 * Operations
 */

static struct vpeer *
peer_up(const struct xv *x, uint32_t rank)
{
	struct vpeer *p = xv_peer_find(x, rank);

	return (p != NULL && p->up) ? p : NULL;
}

static int
xv_post_recv(struct xp *xp, uint32_t peer, const struct iovec *iov,
	      int niov, uint64_t cookie)
{
	struct xv *x = (struct xv *)xp;
	struct vpeer *p = peer_up(x, peer);
	struct ibv_sge sge[MAX_SGE];
	struct xp_recv *r;
	int rc, nsge;

	if (p == NULL)
		return -ENOTCONN;
	r = xp_recv_new(iov, niov, cookie);
	if (r == NULL)
		return -ENOMEM;
	nsge = xv_in_place(x, iov, niov, true, sge);
	if (nsge > 0) {
		r->slot = UINT32_MAX;
	} else if (r->len > x->rring.slot_size ||
		   !slots_get(x->rring.free, &r->slot)) {
		free(r);
		return -ENOBUFS;
	}
	rc = post_block_recv(p, r, sge, nsge);
	if (rc < 0) {
		if (r->slot != UINT32_MAX)
			slots_put(x->rring.free, r->slot);
		free(r);
		return rc;
	}
	xp_recvq_push(&p->recvs, r);
	return 0;
}

static int
xv_send(struct xp *xp, uint32_t peer, const struct iovec *iov, int niov,
	 uint32_t imm, uint64_t cookie)
{
	struct xv *x = (struct xv *)xp;
	struct vpeer *p = peer_up(x, peer);
	struct ibv_sge sge[MAX_SGE];
	struct psend *s;

	if (p == NULL)
		return -ENOTCONN;
	s = malloc(sizeof(*s) + (size_t)niov * sizeof(*iov));
	if (s == NULL)
		return -ENOMEM;
	s->p = p;
	s->cookie = cookie;
	s->imm = imm;
	s->niov = niov;
	memcpy(s->iov, iov, (size_t)niov * sizeof(*iov));
	if (xv_in_place(x, iov, niov, false, sge) > 0 && x->whead == NULL) {
		s->slot = UINT32_MAX;
		return launch(x, s);
	}
	if (x->sring.mem == NULL) {
		free(s);
		return -ENOBUFS;
	}
	s->next = NULL;
	if (x->wtail != NULL)
		x->wtail->next = s;
	else
		x->whead = s;
	x->wtail = s;
	launch_waiting(x);
	return 0;
}

static int
xv_signal(struct xp *xp, uint32_t peer, uint64_t value)
{
	struct vpeer *p = peer_up((struct xv *)xp, peer);

	if (p == NULL)
		return -ENOTCONN;
	return queue_signal(p, value);
}

static void
xv_finish(struct xp *xp, uint32_t peer)
{
	struct vpeer *p = peer_up((struct xv *)xp, peer);

	if (p == NULL)
		return;
	p->finishing = true;
	rdma_disconnect(p->data.id);
	rdma_disconnect(p->sig.id);
}

static void
on_timer_closed(uv_handle_t *h)
{
	free(h->data);
}

static void
xv_free(struct xp *xp)
{
	struct xv *x = (struct xv *)xp;
	struct psend *s, *sn;
	size_t i;

	for (i = 0; i < x->peers.n; i++)
		xv_peer_free(x, rt_at(&x->peers, i));
	rt_clear(&x->peers);
	for (s = x->whead; s != NULL; s = sn) {
		sn = s->next;
		free(s);
	}
	ring_fini(&x->sring);
	ring_fini(&x->rring);
	xv_regions_free(x);
	free(x->addrs);
	uv_close((uv_handle_t *)&x->timer, on_timer_closed);
}

static void
xv_stats(const struct xp *xp, struct xp_stats *out)
{
	*out = ((const struct xv *)xp)->stats;
}

const struct xp_ops xv_ops = {
	.name = "verbs",
	.reg = xv_reg,
	.connect = xv_connect,
	.post_recv = xv_post_recv,
	.send = xv_send,
	.signal = xv_signal,
	.finish = xv_finish,
	.free = xv_free,
	.stats = xv_stats,
};

static int
query_limits(struct xv *x)
{
	struct ibv_device_attr attr;
	struct ibv_context *verbs = vb_pd(x->dev)->context;

	if (ibv_query_device(verbs, &attr) != 0)
		return -EIO;
	x->max_sge = attr.max_sge < MAX_SGE ? attr.max_sge : MAX_SGE;
	return 0;
}

int
xv_new(const struct xv_cfg *cfg, struct xp **out, struct rd_err *err)
{
	struct xv *x;
	int rc;

	*out = NULL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return -ENOMEM;
	x->base.ops = &xv_ops;
	x->cfg = *cfg;
	x->vb = cfg->vb;
	x->dev = cfg->dev;
	x->bind = *cfg->bind;
	x->sq_cap = cfg->window + SEND_RING + 8;
	uv_timer_init(cfg->loop, &x->timer);
	x->timer.data = x;
	x->addrs = xp_addr_copy(cfg->peers, cfg->npeers);
	x->naddrs = cfg->npeers;
	rc = x->addrs != NULL || cfg->npeers == 0 ? query_limits(x) : -ENOMEM;
	/* receivers: bounce rings, registered before data flows; the sender
	 * sends from its registered sources, but a block made of more pieces
	 * (small files) than a work request takes goes through a copy */
	if (rc == 0 && cfg->rank > 0)
		rc = ring_init(x, &x->rring, cfg->window, cfg->block_size, err);
	if (rc == 0)
		rc = ring_init(x, &x->sring, SEND_RING, cfg->block_size, err);
	if (rc < 0) {
		xv_free(&x->base);
		return rc;
	}
	uv_timer_start(&x->timer, xv_on_deadline, 200, 200);
	*out = &x->base;
	return 0;
}
