/* SPDX-License-Identifier: MIT */
/*
 * peers - the verbs transport's peers and the connections of their two
 * queue pairs over rdma_cm (xv_int.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/net.h"
#include "util/wire.h"
#include "transport/verbs/xv_int.h"

/* ---------------------------------------------------------------------
 * Hello (connection request private data)
 */

static void
hello_put(uint8_t out[HELLO_LEN], const struct xv *x, uint32_t to,
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
xv_parse_hello(const void *pdata, uint8_t len, struct xv_hello *h)
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

struct vpeer *
xv_peer_find(const struct xv *x, uint32_t rank)
{
	return rt_find(&x->peers, rank);
}


static void
vqp_init(struct vqp *q, struct vpeer *p, uint8_t kind)
{
	q->p = p;
	q->kind = kind;
	q->h.event = xv_on_cm;
	q->slot = vb_slot_new(p->x->vb, kind == KIND_DATA ? xv_on_data_wc
							  : xv_on_sig_wc, q);
}


int
xv_peer_add(struct xv *x, uint32_t rank, struct vpeer **out)
{
	struct vpeer *p = calloc(1, sizeof(*p));
	int rc;

	if (p == NULL)
		return -ENOMEM;
	p->x = x;
	p->rank = rank;
	p->nsigbuf = x->cfg.window + 16;
	slots_credit_init(&p->cr, p->nsigbuf, SIG_RESERVE);
	vqp_init(&p->data, p, KIND_DATA);
	vqp_init(&p->sig, p, KIND_SIGNAL);
	p->deadline = uv_now(x->cfg.loop) + x->cfg.connect_timeout_ms;
	rc = p->data.slot && p->sig.slot ? rt_add(&x->peers, rank, p)
					 : -ENOMEM;
	if (rc < 0) {
		xv_peer_free(x, p);
		return rc;
	}
	*out = p;
	return 0;
}

/* Reverse order of creation: queue pairs and ids, then their memory. */
static void
vqp_destroy(struct xv *x, struct vqp *q)
{
	vb_slot_drop(x->vb, q->slot);
	if (q->id == NULL)
		return;
	if (q->qp)
		rdma_destroy_qp(q->id);
	rdma_destroy_id(q->id);
	q->id = NULL;
}

void
xv_peer_free(struct xv *x, struct vpeer *p)
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
 * Connections
 */

void
xv_emit_connected(struct vpeer *p, int status)
{
	if (p->lost || p->up)
		return;
	if (status < 0)
		p->lost = true;
	else
		p->up = true;
	p->x->base.ev.connected(p->x->base.ctx, p->rank, status);
}

void
xv_emit_lost(struct vpeer *p, int status)
{
	bool was_up = p->up;

	if (p->lost)
		return;
	if (!was_up) {
		xv_emit_connected(p, status < 0 ? status : -ECONNREFUSED);
		return;
	}
	p->lost = true;
	p->up = false;
	p->x->base.ev.lost(p->x->base.ctx, p->rank, status);
}

static int
xv_create_qp(struct vqp *q)
{
	struct xv *x = q->p->x;
	struct ibv_qp_init_attr attr = {
		.send_cq = vb_cq(x->dev), .recv_cq = vb_cq(x->dev),
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
	};

	if (q->kind == KIND_DATA) {
		attr.cap.max_send_wr = x->sq_cap;
		attr.cap.max_recv_wr = x->cfg.window + 2;
		attr.cap.max_send_sge = (uint32_t)x->max_sge;
		attr.cap.max_recv_sge = (uint32_t)x->max_sge;
	} else {
		attr.cap.max_send_wr = q->p->nsigbuf + 8;	/* see flush_signals */
		attr.cap.max_recv_wr = q->p->nsigbuf;
		attr.cap.max_send_sge = 1;
		attr.cap.max_inline_data = MSG_LEN;
		attr.cap.max_recv_sge = 1;
	}
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
	int rc = xv_create_qp(q);

	if (rc == 0 && q->kind == KIND_SIGNAL)
		rc = xv_sig_buffers(p, NULL);
	if (rc < 0)
		return rc;
	hello_put(hello, p->x, p->rank, q->kind);
	conn_param(&cp, hello, HELLO_LEN);
	return rdma_connect(q->id, &cp) == 0 ? 0 : -errno;
}


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
		xv_emit_connected(p, 0);
}

void
xv_on_cm(struct vb_cm *h, struct rdma_cm_event *ev)
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
			rc = xv_connect_qp(p->x, &p->data,
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
		xv_emit_lost(p, 0);
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
		xv_emit_lost(p, rc);
}

int
xv_connect_qp(struct xv *x, struct vqp *q, const struct sockaddr_storage *to)
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

void
xv_on_deadline(uv_timer_t *t)
{
	struct xv *x = t->data;
	uint64_t now = uv_now(t->loop);
	size_t i;

	for (i = 0; i < x->peers.n; i++) {
		struct vpeer *p = rt_at(&x->peers, i);

		if (!p->up && !p->lost && now >= p->deadline) {
			log_info("rdma: rank %u: no connection after %u ms",
				 p->rank, x->cfg.connect_timeout_ms);
			xv_emit_connected(p, -ETIMEDOUT);
			return;		/* an event: stop here */
		}
	}
}


int
xv_connect(struct xp *xp, uint32_t peer)
{
	struct xv *x = (struct xv *)xp;
	struct vpeer *p;
	int rc;

	if (peer >= x->cfg.n || peer <= x->cfg.rank || xv_peer_find(x, peer) ||
	    xp_addr_find(x->addrs, x->naddrs, peer) == NULL)
		return -EINVAL;
	rc = xv_peer_add(x, peer, &p);
	if (rc == 0)
		rc = xv_connect_qp(x, &p->sig,
				xp_addr_find(x->addrs, x->naddrs, peer));
	return rc;
}

int
xv_accept(struct xp *xp, struct rdma_cm_id *id, const struct xv_hello *h)
{
	struct xv *x = (struct xv *)xp;
	struct rdma_conn_param cp;
	struct vpeer *p;
	struct vqp *q;
	int rc = 0;

	if (xp->ops != &xv_ops || h->to != x->cfg.rank || h->from >= h->to)
		return -EINVAL;
	p = xv_peer_find(x, h->from);
	if (p == NULL)
		rc = xv_peer_add(x, h->from, &p);
	if (rc < 0)
		return rc;
	q = h->kind == KIND_DATA ? &p->data : &p->sig;
	if (q->id != NULL || p->lost)
		return -EALREADY;
	q->id = id;
	id->context = &q->h;
	log_debug("rdma: rank %u %s queue pair: accepting", p->rank,
		  q->kind == KIND_DATA ? "data" : "signal");
	rc = xv_create_qp(q);
	if (rc == 0 && q->kind == KIND_SIGNAL)
		rc = xv_sig_buffers(p, NULL);
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
