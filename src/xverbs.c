/*
 * xverbs - RDMA verbs transport (see xverbs.h).
 *
 * Events are always the last thing a function does: the owner may react
 * by tearing the transport down on the next loop turn, never during one.
 */
#include "xverbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "net.h"
#include "ranktab.h"
#include "slots.h"
#include "wire.h"

#define KIND_DATA 1
#define KIND_SIGNAL 2
#define HELLO_MAGIC 0x52444d56u		/* "RDMV" */
#define HELLO_LEN 32

#define MSG_LEN 16
#define MSG_SIGNAL 1
#define MSG_CREDIT 2
#define SIG_RESERVE 2

#define SEND_RING 4
#define RING_BUDGET (64u << 20)		/* bytes of receive bounce buffers */
#define TAG_SEND VB_TAG_MAX		/* sends complete in order: no tag */
#define MAX_SGE 16

struct ring {
	uint8_t *mem;
	size_t len;
	uint32_t slot_size;
	struct slots *free;
	struct ibv_mr *mr;
};

struct region {
	uint8_t *addr;
	size_t len;
	struct ibv_mr *mr;
};

/* A block send, waiting for a bounce buffer or in flight.  (A posted
 * receive is an xp_recv, xport.h: where the block lands after the
 * bounce.) */
struct psend {
	struct psend *next;
	struct vpeer *p;
	uint64_t cookie;
	uint32_t imm;
	uint32_t slot;		/* bounce slot, or UINT32_MAX: zero copy */
	int niov;
	struct iovec iov[];
};

struct vqp {
	struct vpeer *p;
	struct vb_cm h;		/* first: the cm handler */
	struct rdma_cm_id *id;
	uint64_t slot;		/* completion routing */
	uint8_t kind;
	bool qp, up;
};

struct vpeer {
	struct xvb *x;
	uint32_t rank;
	struct vqp data, sig;
	bool up, lost, finishing;
	uint64_t deadline;	/* for connecting, in loop time */
	struct xp_recvq recvs;		/* posted, in order */
	struct psend *shead, *stail;	/* block sends, in order */
	struct psend *snext;		/* the first not yet posted */
	uint32_t nposted;		/* on the data send queue */
	uint32_t sig_posted;		/* on the signal send queue */
	uint8_t *sigbuf;		/* receive buffers of the signal QP */
	struct ibv_mr *sigmr;
	uint32_t nsigbuf;
	struct credit cr;
	uint64_t *sigq;			/* signals waiting for credits */
	uint32_t sigq_head, sigq_n, sigq_cap;
};

struct xvb {
	struct xp base;
	struct xvb_cfg cfg;
	struct xp_addr *addrs;		/* of the neighbours, by rank */
	size_t naddrs;
	struct sockaddr_storage bind;
	struct vb *vb;
	struct vb_dev *dev;
	struct ranktab peers;		/* struct vpeer by rank */
	struct region *regions;
	size_t nregions;
	struct ring rring, sring;	/* receive and send bounce buffers */
	struct psend *whead, *wtail;	/* sends waiting for a bounce slot */
	int max_sge;
	uint32_t sq_cap;		/* data send queue entries per peer */
	uv_timer_t timer;		/* connect deadlines */
};

static const struct xp_ops xvb_ops;

static void emit_lost(struct vpeer *p, int status);

/* ---------------------------------------------------------------------
 * Rings and regions
 */

unsigned
xvb_max_window(uint32_t block_size)
{
	unsigned w = RING_BUDGET / (block_size ? block_size : 1);

	return w < 2 ? 2 : w;
}

static int
ring_init(struct xvb *x, struct ring *r, uint32_t nslots, uint32_t size,
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

/* The lkey covering [addr, addr + len), or false if unregistered. */
static bool
region_lkey(const struct xvb *x, const void *addr, size_t len, uint32_t *lkey)
{
	const uint8_t *a = addr;
	size_t i;

	for (i = 0; i < x->nregions; i++) {
		const struct region *r = &x->regions[i];

		if (a >= r->addr && a + len <= r->addr + r->len) {
			*lkey = r->mr->lkey;
			return true;
		}
	}
	return false;
}

/* ---------------------------------------------------------------------
 * Hello (connection request private data)
 */

static void
hello_put(uint8_t out[HELLO_LEN], const struct xvb *x, uint32_t to,
	  uint8_t kind)
{
	memset(out, 0, HELLO_LEN);
	be_put32(out, HELLO_MAGIC);
	out[4] = PROTO_VERSION;
	out[5] = kind;
	memcpy(out + 8, x->cfg.token, PROTO_TOKEN_LEN);
	be_put32(out + 24, x->cfg.rank);
	be_put32(out + 28, to);
}

int
xvb_parse_hello(const void *pdata, uint8_t len, struct xvb_hello *h)
{
	const uint8_t *in = pdata;

	if (in == NULL || len < HELLO_LEN || be_get32(in) != HELLO_MAGIC ||
	    in[4] != PROTO_VERSION ||
	    (in[5] != KIND_DATA && in[5] != KIND_SIGNAL))
		return -EBADMSG;
	h->kind = in[5];
	memcpy(h->token, in + 8, PROTO_TOKEN_LEN);
	h->from = be_get32(in + 24);
	h->to = be_get32(in + 28);
	return h->from < h->to && h->to < SCHED_MAX_MEMBERS ? 0 : -EBADMSG;
}

/* ---------------------------------------------------------------------
 * Peers
 */

static struct vpeer *
peer_find(const struct xvb *x, uint32_t rank)
{
	return rt_find(&x->peers, rank);
}

static void on_data_wc(void *ctx, uint32_t tag, const struct ibv_wc *wc);
static void on_sig_wc(void *ctx, uint32_t tag, const struct ibv_wc *wc);
static void on_cm(struct vb_cm *h, struct rdma_cm_event *ev);

static void
vqp_init(struct vqp *q, struct vpeer *p, uint8_t kind)
{
	q->p = p;
	q->kind = kind;
	q->h.event = on_cm;
	q->slot = vb_slot_new(p->x->vb, kind == KIND_DATA ? on_data_wc
							  : on_sig_wc, q);
}

static void peer_free(struct xvb *x, struct vpeer *p);

static int
peer_add(struct xvb *x, uint32_t rank, struct vpeer **out)
{
	struct vpeer *p = calloc(1, sizeof(*p));
	int rc;

	if (p == NULL)
		return -ENOMEM;
	p->x = x;
	p->rank = rank;
	p->nsigbuf = x->cfg.window + 16;
	credit_init(&p->cr, p->nsigbuf, SIG_RESERVE);
	vqp_init(&p->data, p, KIND_DATA);
	vqp_init(&p->sig, p, KIND_SIGNAL);
	p->deadline = uv_now(x->cfg.loop) + x->cfg.connect_timeout_ms;
	rc = p->data.slot && p->sig.slot ? rt_add(&x->peers, rank, p)
					 : -ENOMEM;
	if (rc < 0) {
		peer_free(x, p);
		return rc;
	}
	*out = p;
	return 0;
}

/* Reverse order of creation: queue pairs and ids, then their memory. */
static void
vqp_destroy(struct xvb *x, struct vqp *q)
{
	vb_slot_drop(x->vb, q->slot);
	if (q->id == NULL)
		return;
	if (q->qp)
		rdma_destroy_qp(q->id);
	rdma_destroy_id(q->id);
	q->id = NULL;
}

static void
peer_free(struct xvb *x, struct vpeer *p)
{
	struct psend *s, *sn;

	vqp_destroy(x, &p->data);
	vqp_destroy(x, &p->sig);
	if (p->sigmr != NULL)
		ibv_dereg_mr(p->sigmr);
	free(p->sigbuf);
	xp_recvq_clear(&p->recvs);
	for (s = p->shead; s != NULL; s = sn) {
		sn = s->next;
		free(s);
	}
	free(p->sigq);
	free(p);
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

static int
sig_buffers(struct vpeer *p, struct rd_err *err)
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

	be_put32(msg + 4, credit_piggyback(&p->cr));
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

	while (p->sigq_n > 0 && p->sig_posted < cap && credit_take(&p->cr)) {
		rc = post_msg(p, MSG_SIGNAL, p->sigq[p->sigq_head]);
		if (rc < 0)
			return rc;
		p->sig_posted++;
		p->sigq_head = (p->sigq_head + 1) % p->sigq_cap;
		p->sigq_n--;
	}
	if (p->sigq_n == 0 && p->sig_posted < cap &&
	    credit_update_due(&p->cr) && credit_take_reserved(&p->cr)) {
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
		emit_lost(p, -EIO);
	}
	return true;
}

static void
on_sig_wc(void *ctx, uint32_t tag, const struct ibv_wc *wc)
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
			emit_lost(p, -EIO);
		return;
	}
	if (tag >= p->nsigbuf)
		return;
	msg = p->sigbuf + (size_t)tag * MSG_LEN;
	type = msg[0];
	credit_returned(&p->cr, be_get32(msg + 4));
	value = be_get64(msg + 8);
	rc = post_sig_recv(p, tag);
	if (rc == 0) {
		credit_reposted(&p->cr);
		rc = flush_signals(p);
	}
	if (rc < 0 || wc->byte_len != MSG_LEN)
		emit_lost(p, rc < 0 ? rc : -EPROTO);
	else if (type == MSG_SIGNAL)
		p->x->base.ev.signal(p->x->base.ctx, p->rank, value);
}

/* ---------------------------------------------------------------------
 * Blocks
 */

static int
post_block_recv(struct vpeer *p, struct xp_recv *r)
{
	struct xvb *x = p->x;
	struct ibv_sge sge = {
		.addr = (uintptr_t)ring_at(&x->rring, r->slot),
		.length = x->rring.slot_size, .lkey = x->rring.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = vb_wr_id(p->data.slot, r->slot), .sg_list = &sge,
		.num_sge = 1,
	}, *bad;

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
	struct xvb *x = p->x;
	struct xp_recv *r = p->recvs.head;
	uint64_t cookie;

	if (r == NULL || r->slot != tag || !(wc->wc_flags & IBV_WC_WITH_IMM) ||
	    wc->byte_len != r->len) {
		log_warn("rdma: rank %u sent an unexpected block", p->rank);
		emit_lost(p, -EPROTO);
		return;
	}
	scatter(ring_at(&x->rring, r->slot), r->iov, r->niov);
	slots_put(x->rring.free, r->slot);
	xp_recvq_pop(&p->recvs);
	cookie = r->cookie;
	free(r);
	x->base.ev.recv_done(x->base.ctx, p->rank, cookie,
			     ntohl(wc->imm_data));
}

static int
post_block_send(struct xvb *x, struct psend *s)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr = {
		.wr_id = vb_wr_id(s->p->data.slot, TAG_SEND), .sg_list = sge,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(s->imm),
	}, *bad;
	uint64_t len = 0;
	int i, rc;

	if (s->slot == UINT32_MAX) {
		for (i = 0; i < s->niov; i++) {
			sge[i].addr = (uintptr_t)s->iov[i].iov_base;
			sge[i].length = (uint32_t)s->iov[i].iov_len;
			region_lkey(x, s->iov[i].iov_base, s->iov[i].iov_len,
				    &sge[i].lkey);
		}
		wr.num_sge = s->niov;
	} else {
		for (i = 0; i < s->niov; i++)
			len += s->iov[i].iov_len;
		gather(ring_at(&x->sring, s->slot), s->iov, s->niov);
		sge[0].addr = (uintptr_t)ring_at(&x->sring, s->slot);
		sge[0].length = (uint32_t)len;
		sge[0].lkey = x->sring.mr->lkey;
		wr.num_sge = 1;
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
post_queued_sends(struct xvb *x, struct vpeer *p)
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
launch(struct xvb *x, struct psend *s)
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
launch_waiting(struct xvb *x)
{
	struct psend *s;

	while ((s = x->whead) != NULL && slots_get(x->sring.free, &s->slot)) {
		x->whead = s->next;
		if (x->whead == NULL)
			x->wtail = NULL;
		if (launch(x, s) < 0)
			emit_lost(s->p, -EIO);
	}
}

static void
on_block_sent(struct vpeer *p)
{
	struct xvb *x = p->x;
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
		emit_lost(p, -EIO);
		return;
	}
	launch_waiting(x);
	x->base.ev.send_done(x->base.ctx, p->rank, cookie, 0);
}

static void
on_data_wc(void *ctx, uint32_t tag, const struct ibv_wc *wc)
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
 * Connections
 */

static void
emit_connected(struct vpeer *p, int status)
{
	if (p->lost || p->up)
		return;
	if (status < 0)
		p->lost = true;
	else
		p->up = true;
	p->x->base.ev.connected(p->x->base.ctx, p->rank, status);
}

static void
emit_lost(struct vpeer *p, int status)
{
	bool was_up = p->up;

	if (p->lost)
		return;
	if (!was_up) {
		emit_connected(p, status < 0 ? status : -ECONNREFUSED);
		return;
	}
	p->lost = true;
	p->up = false;
	p->x->base.ev.lost(p->x->base.ctx, p->rank, status);
}

static int
create_qp(struct vqp *q)
{
	struct xvb *x = q->p->x;
	struct ibv_qp_init_attr attr = {
		.send_cq = vb_cq(x->dev), .recv_cq = vb_cq(x->dev),
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
	};

	if (q->kind == KIND_DATA) {
		attr.cap.max_send_wr = x->sq_cap;
		attr.cap.max_recv_wr = x->cfg.window + 2;
		attr.cap.max_send_sge = (uint32_t)x->max_sge;
	} else {
		attr.cap.max_send_wr = q->p->nsigbuf + 8;	/* see flush_signals */
		attr.cap.max_recv_wr = q->p->nsigbuf;
		attr.cap.max_send_sge = 1;
		attr.cap.max_inline_data = MSG_LEN;
	}
	attr.cap.max_recv_sge = 1;
	if (rdma_create_qp(q->id, vb_pd(x->dev), &attr) != 0)
		return -errno;
	q->qp = true;
	return 0;
}

static void
conn_param(struct rdma_conn_param *cp, const void *pdata, uint8_t len)
{
	memset(cp, 0, sizeof(*cp));
	cp->private_data = pdata;
	cp->private_data_len = len;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

static int
on_route(struct vqp *q)
{
	struct vpeer *p = q->p;
	struct rdma_conn_param cp;
	uint8_t hello[HELLO_LEN];
	int rc = create_qp(q);

	if (rc == 0 && q->kind == KIND_SIGNAL)
		rc = sig_buffers(p, NULL);
	if (rc < 0)
		return rc;
	hello_put(hello, p->x, p->rank, q->kind);
	conn_param(&cp, hello, HELLO_LEN);
	return rdma_connect(q->id, &cp) == 0 ? 0 : -errno;
}

static int connect_qp(struct xvb *x, struct vqp *q,
		      const struct sockaddr_storage *to);

static int
cm_status(enum rdma_cm_event_type type, int status)
{
	switch (type) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		return -EADDRNOTAVAIL;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return -ENETUNREACH;
	case RDMA_CM_EVENT_UNREACHABLE:
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	default:
		return status < 0 ? status : -ECONNABORTED;
	}
}

static void
on_established(struct vqp *q)
{
	struct vpeer *p = q->p;

	q->up = true;
	if (p->data.up && p->sig.up)
		emit_connected(p, 0);
}

static void
on_cm(struct vb_cm *h, struct rdma_cm_event *ev)
{
	struct vqp *q = (struct vqp *)((char *)h - offsetof(struct vqp, h));
	struct vpeer *p = q->p;
	unsigned t = p->x->cfg.connect_timeout_ms;
	int rc = 0;

	log_debug("rdma: rank %u %s queue pair: %s", p->rank,
		  q->kind == KIND_DATA ? "data" : "signal",
		  rdma_event_str(ev->event));
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		rc = rdma_resolve_route(q->id, (int)t) == 0 ? 0 : -errno;
		/* Now that the neighbour is known, resolve the data queue
		 * pair's address: resolving both at once leaves the second
		 * to the kernel's slow retry (seconds). */
		if (rc == 0 && q->kind == KIND_SIGNAL && p->data.id == NULL)
			rc = connect_qp(p->x, &p->data,
					xp_addr_find(p->x->addrs, p->x->naddrs,
						     p->rank));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		rc = on_route(q);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		on_established(q);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* the peer disconnects once its last sends completed, but
		 * their completions here may still be queued */
		vb_drain(p->x->dev);
		emit_lost(p, 0);
		return;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		return;
	default:
		log_info("rdma: rank %u: %s (status %d)", p->rank,
			 rdma_event_str(ev->event), ev->status);
		rc = cm_status(ev->event, ev->status);
		break;
	}
	if (rc < 0)
		emit_lost(p, rc);
}

static int
connect_qp(struct xvb *x, struct vqp *q, const struct sockaddr_storage *to)
{
	struct sockaddr_storage from;
	int rc;

	rc = vb_create_id(x->vb, &q->h, &q->id);
	if (rc < 0)
		return rc;
	net_without_port(&x->bind, &from);
	if (rdma_resolve_addr(q->id, (struct sockaddr *)&from,
			      (struct sockaddr *)to,
			      (int)x->cfg.connect_timeout_ms) != 0)
		return -errno;
	return 0;
}

static void
on_deadline(uv_timer_t *t)
{
	struct xvb *x = t->data;
	uint64_t now = uv_now(t->loop);
	size_t i;

	for (i = 0; i < x->peers.n; i++) {
		struct vpeer *p = rt_at(&x->peers, i);

		if (!p->up && !p->lost && now >= p->deadline) {
			log_info("rdma: rank %u: no connection after %u ms",
				 p->rank, x->cfg.connect_timeout_ms);
			emit_connected(p, -ETIMEDOUT);
			return;		/* an event: stop here */
		}
	}
}

/* ---------------------------------------------------------------------
 * Operations
 */

static int
xvb_reg(struct xp *xp, void *addr, size_t len, bool writable, int fd,
	uint64_t off)
{
	struct xvb *x = (struct xvb *)xp;
	struct region *grown;
	struct rd_err err = { 0 };
	int rc;

	if (len == 0)
		return 0;
	grown = realloc(x->regions, (x->nregions + 1) * sizeof(*grown));
	if (grown == NULL)
		return -ENOMEM;
	x->regions = grown;
	rc = vb_reg(x->dev, addr, len, writable ? IBV_ACCESS_LOCAL_WRITE : 0,
		    &grown[x->nregions].mr, &err);
	if (rc < 0) {
		snprintf(x->base.errmsg, sizeof(x->base.errmsg), "%s", err.msg);
		return rc;
	}
	grown[x->nregions].addr = addr;
	grown[x->nregions].len = len;
	x->nregions++;
	return 0;
}

static int
xvb_connect(struct xp *xp, uint32_t peer)
{
	struct xvb *x = (struct xvb *)xp;
	struct vpeer *p;
	int rc;

	if (peer >= x->cfg.n || peer <= x->cfg.rank || peer_find(x, peer) ||
	    xp_addr_find(x->addrs, x->naddrs, peer) == NULL)
		return -EINVAL;
	rc = peer_add(x, peer, &p);
	if (rc == 0)
		rc = connect_qp(x, &p->sig,
				xp_addr_find(x->addrs, x->naddrs, peer));
	return rc;
}

static struct vpeer *
peer_up(const struct xvb *x, uint32_t rank)
{
	struct vpeer *p = peer_find(x, rank);

	return (p != NULL && p->up) ? p : NULL;
}

static int
xvb_post_recv(struct xp *xp, uint32_t peer, const struct iovec *iov,
	      int niov, uint64_t cookie)
{
	struct xvb *x = (struct xvb *)xp;
	struct vpeer *p = peer_up(x, peer);
	struct xp_recv *r;
	int rc;

	if (p == NULL)
		return -ENOTCONN;
	r = xp_recv_new(iov, niov, cookie);
	if (r == NULL)
		return -ENOMEM;
	if (r->len > x->rring.slot_size || !slots_get(x->rring.free, &r->slot)) {
		free(r);
		return -ENOBUFS;
	}
	rc = post_block_recv(p, r);
	if (rc < 0) {
		slots_put(x->rring.free, r->slot);
		free(r);
		return rc;
	}
	xp_recvq_push(&p->recvs, r);
	return 0;
}

/* Zero copy when every piece lies in registered memory. */
static bool
zero_copy(const struct xvb *x, const struct iovec *iov, int niov)
{
	uint32_t lkey;
	int i;

	if (niov > x->max_sge)
		return false;
	for (i = 0; i < niov; i++)
		if (!region_lkey(x, iov[i].iov_base, iov[i].iov_len, &lkey))
			return false;
	return true;
}

static int
xvb_send(struct xp *xp, uint32_t peer, const struct iovec *iov, int niov,
	 uint32_t imm, uint64_t cookie)
{
	struct xvb *x = (struct xvb *)xp;
	struct vpeer *p = peer_up(x, peer);
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
	if (zero_copy(x, iov, niov) && x->whead == NULL) {
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
xvb_signal(struct xp *xp, uint32_t peer, uint64_t value)
{
	struct vpeer *p = peer_up((struct xvb *)xp, peer);

	if (p == NULL)
		return -ENOTCONN;
	return queue_signal(p, value);
}

static void
xvb_finish(struct xp *xp, uint32_t peer)
{
	struct vpeer *p = peer_up((struct xvb *)xp, peer);

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
xvb_free(struct xp *xp)
{
	struct xvb *x = (struct xvb *)xp;
	struct psend *s, *sn;
	size_t i;

	for (i = 0; i < x->peers.n; i++)
		peer_free(x, rt_at(&x->peers, i));
	rt_clear(&x->peers);
	for (s = x->whead; s != NULL; s = sn) {
		sn = s->next;
		free(s);
	}
	ring_fini(&x->sring);
	ring_fini(&x->rring);
	for (i = 0; i < x->nregions; i++)
		ibv_dereg_mr(x->regions[i].mr);
	free(x->regions);
	free(x->addrs);
	uv_close((uv_handle_t *)&x->timer, on_timer_closed);
}

static const struct xp_ops xvb_ops = {
	.name = "verbs",
	.reg = xvb_reg,
	.connect = xvb_connect,
	.post_recv = xvb_post_recv,
	.send = xvb_send,
	.signal = xvb_signal,
	.finish = xvb_finish,
	.free = xvb_free,
};

int
xvb_accept(struct xp *xp, struct rdma_cm_id *id, const struct xvb_hello *h)
{
	struct xvb *x = (struct xvb *)xp;
	struct rdma_conn_param cp;
	struct vpeer *p;
	struct vqp *q;
	int rc = 0;

	if (xp->ops != &xvb_ops || h->to != x->cfg.rank || h->from >= h->to)
		return -EINVAL;
	p = peer_find(x, h->from);
	if (p == NULL)
		rc = peer_add(x, h->from, &p);
	if (rc < 0)
		return rc;
	q = h->kind == KIND_DATA ? &p->data : &p->sig;
	if (q->id != NULL || p->lost)
		return -EALREADY;
	q->id = id;
	id->context = &q->h;
	log_debug("rdma: rank %u %s queue pair: accepting", p->rank,
		  q->kind == KIND_DATA ? "data" : "signal");
	rc = create_qp(q);
	if (rc == 0 && q->kind == KIND_SIGNAL)
		rc = sig_buffers(p, NULL);
	conn_param(&cp, NULL, 0);
	if (rc == 0 && rdma_accept(id, &cp) != 0)
		rc = -errno;
	if (rc < 0) {
		/* the caller rejects and destroys the id */
		if (q->qp)
			rdma_destroy_qp(id);
		q->qp = false;
		q->id = NULL;
	}
	return rc;
}

static int
query_limits(struct xvb *x)
{
	struct ibv_device_attr attr;
	struct ibv_context *verbs = vb_pd(x->dev)->context;

	if (ibv_query_device(verbs, &attr) != 0)
		return -EIO;
	x->max_sge = attr.max_sge < MAX_SGE ? attr.max_sge : MAX_SGE;
	return 0;
}

int
xvb_new(const struct xvb_cfg *cfg, struct xp **out, struct rd_err *err)
{
	struct xvb *x;
	int rc;

	*out = NULL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return -ENOMEM;
	x->base.ops = &xvb_ops;
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
		xvb_free(&x->base);
		return rc;
	}
	uv_timer_start(&x->timer, on_deadline, 200, 200);
	*out = &x->base;
	return 0;
}
