/* SPDX-License-Identifier: MIT */
/*
 * tcp - TCP transport (see tcp.h).
 *
 * Events are always the last thing a function does: the owner may free
 * the whole transport from inside one.
 */
#include "transport/tcp/tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "util/net.h"
#include "transport/ranktab.h"

/* A schedule neighbour: its connection, once up, and the receives posted
 * for its blocks, in order (the next block it sends goes into the
 * first). */
struct xpeer {
	struct tcp_xport *x;
	uint32_t rank;
	struct conn *c;
	bool up;
	struct xp_recvq recvs;		/* posted, in order */
	struct conn_seg *segs;		/* the head receive's, for conn */
	int segs_cap;
	bool landing;			/* the head receive's block is coming */
	uint64_t landed;		/* ... and has so many bytes in */
	struct xpeer *relay_to;		/* passed on as it lands, to */
	uint64_t relay_cookie;		/* ... in the send of this cookie */
};

/* Memory that is a mapping of a file (xp_reg): its bytes move through
 * the file. */
struct region {
	uintptr_t addr;
	size_t len;
	int fd;
	uint64_t off;
};

struct tcp_xport {
	struct xp base;
	uv_loop_t *loop;
	uint8_t token[PROTO_TOKEN_LEN];
	uint32_t rank;
	uint32_t n;
	struct xp_addr *addrs;	/* of the neighbours, by rank */
	size_t naddrs;
	struct sockaddr_storage bind;
	bool has_bind;
	unsigned connect_timeout_ms;
	unsigned timeout_ms;
	uint32_t block_size;
	struct ranktab peers;	/* struct xpeer by rank */
	struct region *regions;	/* by address, once sorted */
	size_t nregions;
	bool sorted;
};

static const struct conn_ops tcp_conn_ops;

/* How long a finished connection waits for its peer to close its side. */
#define XTCP_LINGER_MS 10000u

/* How much of a block may still be on the way when the next transfer
 * on the same link begins: the next receive is admitted, or the next
 * send handed over, with this much of the current one left.  Enough to
 * cover a signal's way and a sender's reaction, little enough that two
 * flows share a link only briefly. */
static uint64_t
tcp_overlap(uint64_t block)
{
	uint64_t b = block / 8;

	return b < (32u << 10) ? (32u << 10) : b > (256u << 10) ? (256u << 10)
								: b;
}

/* ---------------------------------------------------------------------
 * Peers
 */

static struct xpeer *
peer_find(const struct tcp_xport *x, uint32_t rank)
{
	return rt_find(&x->peers, rank);
}

static int
peer_add(struct tcp_xport *x, uint32_t rank, struct xpeer **out)
{
	struct xpeer *p = calloc(1, sizeof(*p));
	int rc;

	if (p == NULL)
		return -ENOMEM;
	p->x = x;
	p->rank = rank;
	rc = rt_add(&x->peers, rank, p);
	if (rc < 0) {
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

static void
peer_free(struct xpeer *p)
{
	xp_recvq_clear(&p->recvs);
	conn_free(p->c);
	free(p->segs);
	free(p);
}

/* ---------------------------------------------------------------------
 * Memory as segments: through its file where it is a mapping of one
 */

static int
cmp_region(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The region holding [addr, addr + len), or NULL. */
static const struct region *
region_of(struct tcp_xport *x, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	size_t lo = 0, hi = x->nregions, mid;

	if (!x->sorted && x->nregions > 1) {
		qsort(x->regions, x->nregions, sizeof(*x->regions), cmp_region);
		x->sorted = true;
	}
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (x->regions[mid].addr + x->regions[mid].len <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < x->nregions && x->regions[lo].addr <= a &&
	    a + len <= x->regions[lo].addr + x->regions[lo].len)
		return &x->regions[lo];
	return NULL;
}

static void
to_segs(struct tcp_xport *x, const struct iovec *iov, int niov,
	struct conn_seg *segs)
{
	const struct region *r;
	int i;

	for (i = 0; i < niov; i++) {
		r = region_of(x, iov[i].iov_base, iov[i].iov_len);
		segs[i] = (struct conn_seg){ iov[i].iov_base, iov[i].iov_len,
					     r ? r->fd : -1,
					     r ? r->off + ((uintptr_t)
						iov[i].iov_base - r->addr) : 0 };
	}
}

/* The segments of receive r, in p->segs. */
static int
recv_segs(struct xpeer *p, const struct xp_recv *r)
{
	if (r->niov > p->segs_cap) {
		struct conn_seg *grown = realloc(p->segs, (size_t)r->niov *
						 sizeof(*grown));

		if (grown == NULL)
			return -ENOMEM;
		p->segs = grown;
		p->segs_cap = r->niov;
	}
	to_segs(p->x, r->iov, r->niov, p->segs);
	return 0;
}

static struct xpeer *
peer_up(const struct tcp_xport *x, uint32_t rank)
{
	struct xpeer *p = peer_find(x, rank);

	return (p != NULL && p->up) ? p : NULL;
}

/* ---------------------------------------------------------------------
 * Connection callbacks
 */

static int
on_header(void *ctx, struct conn *c, const struct frame *f,
	  const struct conn_seg **segs, int *nseg)
{
	struct xpeer *p = ctx;

	switch (f->type) {
	case MSG_SIGNAL:
		return f->len == 0 ? 0 : -EPROTO;
	case MSG_BLOCK:
		if (p->recvs.head == NULL) {
			log_warn("tcp: rank %u sent a block nobody asked for",
				 p->rank);
			return -EPROTO;
		}
		if (f->len != p->recvs.head->len) {
			log_warn("tcp: rank %u sent %llu bytes, expected %llu",
				 p->rank, (unsigned long long)f->len,
				 (unsigned long long)p->recvs.head->len);
			return -EPROTO;
		}
		if (recv_segs(p, p->recvs.head) < 0)
			return -ENOMEM;
		*segs = p->segs;
		*nseg = p->recvs.head->niov;
		conn_watch_payload(c, tcp_overlap(f->len));
		p->landing = true;
		p->landed = 0;
		if (p->x->base.ev.recv_begins != NULL)
			p->x->base.ev.recv_begins(p->x->base.ctx, p->rank,
						  p->recvs.head->cookie);
		return 0;
	default:
		log_warn("tcp: unexpected %s from rank %u",
			 proto_type_name(f->type), p->rank);
		return -EPROTO;
	}
}

static int
on_frame(void *ctx, struct conn *c, const struct frame *f,
	 const uint8_t *body)
{
	struct xpeer *p = ctx;
	struct tcp_xport *x = p->x;
	struct xp_recv *r;
	uint64_t cookie;

	if (f->type == MSG_SIGNAL) {
		x->base.ev.signal(x->base.ctx, p->rank, f->val);
		return 0;
	}
	r = xp_recvq_pop(&p->recvs);	/* on_header made sure there is one */
	p->landing = false;
	p->relay_to = NULL;
	cookie = r->cookie;
	free(r);
	x->base.ev.recv_done(x->base.ctx, p->rank, cookie, f->arg);
	return 0;
}

static void
on_payload_low(void *ctx, struct conn *c)
{
	struct xpeer *p = ctx;
	struct tcp_xport *x = p->x;

	if (p->recvs.head != NULL && x->base.ev.recv_nearly != NULL)
		x->base.ev.recv_nearly(x->base.ctx, p->rank,
				       p->recvs.head->cookie);
}

/* More of the head receive's block landed: what is passed on as it
 * lands may go that far. */
static void
on_payload(void *ctx, struct conn *c, uint64_t got)
{
	struct xpeer *p = ctx;

	p->landed = got;
	if (p->relay_to != NULL && p->relay_to->c != NULL)
		conn_grow(p->relay_to->c, p->relay_cookie, got);
}

static void
on_sent(void *ctx, struct conn *c, uint64_t cookie, int status)
{
	struct xpeer *p = ctx;

	p->x->base.ev.send_done(p->x->base.ctx, p->rank, cookie,
				status == UV_ECANCELED ? -ECANCELED : status);
}

static void
on_close(void *ctx, struct conn *c, int status)
{
	struct xpeer *p = ctx;

	p->up = false;
	p->x->base.ev.lost(p->x->base.ctx, p->rank, status);
}

static int
send_hello(struct tcp_xport *x, struct xpeer *p)
{
	struct hello h;
	struct frame f = { .type = MSG_HELLO };
	struct wbuf w;
	int rc;

	memcpy(h.token, x->token, PROTO_TOKEN_LEN);
	h.from = x->rank;
	h.to = p->rank;
	wbuf_init(&w);
	rc = hello_encode(&h, &w);
	if (rc == 0) {
		f.len = w.len;
		rc = conn_send_copy(p->c, &f, w.data);
	}
	wbuf_free(&w);
	return rc;
}

static void
on_connect(void *ctx, struct conn *c, int status)
{
	struct xpeer *p = ctx;
	struct tcp_xport *x = p->x;

	if (status == 0)
		status = send_hello(x, p);
	if (status < 0) {
		log_debug("tcp: connection to rank %u (%s) failed: %s", p->rank,
			  conn_peer(c), uv_strerror(status));
		p->c = NULL;
		conn_free(c);
	} else {
		p->up = true;
		conn_keepalive(c, 0, x->timeout_ms);
		conn_set_unsent_limit(c, (unsigned)tcp_overlap(x->block_size));
	}
	x->base.ev.connected(x->base.ctx, p->rank, status);
}

static const struct conn_ops tcp_conn_ops = {
	.on_header = on_header,
	.on_frame = on_frame,
	.on_sent = on_sent,
	.on_connect = on_connect,
	.on_close = on_close,
	.on_payload_low = on_payload_low,
	.on_payload = on_payload,
};

/* ---------------------------------------------------------------------
 * Operations
 */

/* Nothing to pin; a mapping of a file is remembered, to send and receive
 * its bytes through the file. */
static int
tcp_reg(struct xp *xp, void *addr, size_t len, bool writable, int fd,
	 uint64_t off)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	struct region *grown;

	if (fd < 0 || len == 0)
		return 0;
	grown = realloc(x->regions, (x->nregions + 1) * sizeof(*grown));
	if (grown == NULL)
		return -ENOMEM;
	x->regions = grown;
	x->regions[x->nregions++] = (struct region){ (uintptr_t)addr, len,
						     fd, off };
	x->sorted = false;
	return 0;
}

static int
tcp_connect(struct xp *xp, uint32_t peer)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	const struct sockaddr_storage *to = xp_addr_find(x->addrs, x->naddrs,
							 peer);
	struct sockaddr_storage from;
	struct xpeer *p;
	int rc;

	if (peer >= x->n || peer <= x->rank || peer_find(x, peer) != NULL ||
	    to == NULL)
		return -EINVAL;
	rc = peer_add(x, peer, &p);
	if (rc < 0)
		return rc;
	net_without_port(&x->bind, &from);
	return conn_connect(x->loop, (const struct sockaddr *)to,
			    x->has_bind ? (const struct sockaddr *)&from : NULL,
			    x->connect_timeout_ms, &tcp_conn_ops, p, &p->c);
}

static int
tcp_post_recv(struct xp *xp, uint32_t peer, const struct iovec *iov,
	       int niov, uint64_t cookie)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	struct xpeer *p = peer_up(x, peer);
	struct xp_recv *r;

	if (p == NULL)
		return -ENOTCONN;
	r = xp_recv_new(iov, niov, cookie);
	if (r == NULL)
		return -ENOMEM;
	xp_recvq_push(&p->recvs, r);
	return 0;
}

/* A block frame to p from iov: all of it ready, or (from != NULL) as
 * much as has landed of from's head receive, the rest as it lands. */
static int
send_block(struct tcp_xport *x, struct xpeer *p, const struct iovec *iov,
	   int niov, uint32_t imm, uint64_t cookie, struct xpeer *from)
{
	struct frame f = { .type = MSG_BLOCK, .arg = imm, .val = cookie };
	struct conn_seg one[4], *segs = niov <= 4 ? one
				  : malloc((size_t)niov * sizeof(*segs));
	int i, rc;

	if (segs == NULL)
		return -ENOMEM;
	for (i = 0; i < niov; i++)
		f.len += iov[i].iov_len;
	to_segs(x, iov, niov, segs);
	if (from == NULL)
		rc = conn_send_segs(p->c, &f, segs, niov, cookie);
	else if (f.len != from->recvs.head->len)
		rc = -EINVAL;
	else
		rc = conn_send_growing(p->c, &f, segs, niov, cookie,
				       from->landed);
	if (segs != one)
		free(segs);
	return rc;
}

static int
tcp_send(struct xp *xp, uint32_t peer, const struct iovec *iov, int niov,
	  uint32_t imm, uint64_t cookie)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	struct xpeer *p = peer_up(x, peer);

	if (p == NULL)
		return -ENOTCONN;
	return send_block(x, p, iov, niov, imm, cookie, NULL);
}

/* The receive from `from` must be the one landing now, and nothing else
 * passed on from it. */
static int
tcp_send_landing(struct xp *xp, uint32_t peer, const struct iovec *iov,
		  int niov, uint32_t imm, uint64_t cookie, uint32_t from,
		  uint64_t recv_cookie)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	struct xpeer *p = peer_up(x, peer), *src = peer_up(x, from);
	int rc;

	if (p == NULL || src == NULL)
		return -ENOTCONN;
	if (!src->landing || src->recvs.head->cookie != recv_cookie ||
	    src->relay_to != NULL || src == p)
		return -EINVAL;
	rc = send_block(x, p, iov, niov, imm, cookie, src);
	if (rc == 0) {
		src->relay_to = p;
		src->relay_cookie = cookie;
	}
	return rc;
}

static int
tcp_signal(struct xp *xp, uint32_t peer, uint64_t value)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	struct xpeer *p = peer_up(x, peer);
	struct frame f = { .type = MSG_SIGNAL, .val = value };

	if (p == NULL)
		return -ENOTCONN;
	return conn_send_signal(p->c, &f);
}

unsigned
tcp_linger_ms(unsigned timeout_ms)
{
	return timeout_ms > 0 && timeout_ms < XTCP_LINGER_MS ? timeout_ms
							      : XTCP_LINGER_MS;
}

/* Done with this peer: the connection ends in order on its own (its last
 * frames may still be on the way to the peer), and reports nothing,
 * lingering tcp_linger_ms for the peer's end. */
static void
tcp_finish(struct xp *xp, uint32_t peer)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	struct xpeer *p = peer_up(x, peer);

	if (p == NULL)
		return;
	conn_linger(p->c, tcp_linger_ms(x->timeout_ms));
	p->c = NULL;
	p->up = false;
}

static void
tcp_free(struct xp *xp)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	size_t i;

	for (i = 0; i < x->peers.n; i++)
		peer_free(rt_at(&x->peers, i));
	rt_clear(&x->peers);
	free(x->regions);
	free(x->addrs);
	free(x);
}

static const struct xp_ops tcp_ops = {
	.name = "tcp",
	.reg = tcp_reg,
	.connect = tcp_connect,
	.post_recv = tcp_post_recv,
	.send = tcp_send,
	.signal = tcp_signal,
	.finish = tcp_finish,
	.free = tcp_free,
	.send_landing = tcp_send_landing,
};

int
tcp_new(const struct tcp_cfg *cfg, struct xp **out)
{
	struct tcp_xport *x;

	*out = NULL;
	if (cfg->n == 0 || cfg->rank >= cfg->n)
		return -EINVAL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return -ENOMEM;
	x->addrs = xp_addr_copy(cfg->peers, cfg->npeers);
	if (x->addrs == NULL && cfg->npeers > 0) {
		free(x);
		return -ENOMEM;
	}
	x->naddrs = cfg->npeers;
	x->base.ops = &tcp_ops;
	x->loop = cfg->loop;
	memcpy(x->token, cfg->token, PROTO_TOKEN_LEN);
	x->rank = cfg->rank;
	x->n = cfg->n;
	x->connect_timeout_ms = cfg->connect_timeout_ms;
	x->timeout_ms = cfg->timeout_ms;
	x->block_size = cfg->block_size;
	if (cfg->bind != NULL && !net_is_any(cfg->bind)) {
		x->bind = *cfg->bind;
		x->has_bind = true;
	}
	*out = &x->base;
	return 0;
}

int
tcp_adopt(struct xp *xp, struct conn *c, uint32_t from)
{
	struct tcp_xport *x = (struct tcp_xport *)xp;
	struct xpeer *p;
	int rc;

	if (xp->ops != &tcp_ops || from >= x->rank || peer_find(x, from))
		return -EINVAL;
	rc = peer_add(x, from, &p);
	if (rc < 0)
		return rc;
	p->c = c;
	p->up = true;
	conn_set_owner(c, &tcp_conn_ops, p);
	conn_keepalive(c, 0, x->timeout_ms);
	conn_set_unsent_limit(c, (unsigned)tcp_overlap(x->block_size));
	conn_resume(c);
	x->base.ev.connected(x->base.ctx, from, 0);
	return 0;
}
