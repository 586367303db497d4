/* SPDX-License-Identifier: MIT */
/*
 * xport - dispatch to the transport in use, and the posted-receive queue
 * both transports keep (see xport.h).
 */
#include "transport/xport.h"

#include <errno.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void
xp_set_events(struct xp *x, const struct xp_events *ev, void *ctx)
{
	x->ev = *ev;
	x->ctx = ctx;
}

int
xp_reg(struct xp *x, void *addr, size_t len, bool writable, int fd,
       uint64_t off)
{
	return x->ops->reg(x, addr, len, writable, fd, off);
}

int
xp_connect(struct xp *x, uint32_t peer)
{
	return x->ops->connect(x, peer);
}

int
xp_post_recv(struct xp *x, uint32_t peer, const struct iovec *iov, int niov,
	     uint64_t cookie)
{
	return x->ops->post_recv(x, peer, iov, niov, cookie);
}

int
xp_send(struct xp *x, uint32_t peer, const struct iovec *iov, int niov,
	uint32_t imm, uint64_t cookie)
{
	return x->ops->send(x, peer, iov, niov, imm, cookie);
}

bool
xp_can_send_landing(const struct xp *x)
{
	return x->ops->send_landing != NULL;
}

int
xp_send_landing(struct xp *x, uint32_t peer, const struct iovec *iov,
		int niov, uint32_t imm, uint64_t cookie, uint32_t from,
		uint64_t recv_cookie)
{
	if (x->ops->send_landing == NULL)
		return -ENOTSUP;
	return x->ops->send_landing(x, peer, iov, niov, imm, cookie, from,
				    recv_cookie);
}

int
xp_signal(struct xp *x, uint32_t peer, uint64_t value)
{
	return x->ops->signal(x, peer, value);
}

void
xp_finish(struct xp *x, uint32_t peer)
{
	x->ops->finish(x, peer);
}

const char *
xp_errmsg(const struct xp *x)
{
	return x->errmsg[0] != '\0' ? x->errmsg : NULL;
}

bool
xp_stats(const struct xp *x, struct xp_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (x == NULL || x->ops->stats == NULL)
		return false;
	x->ops->stats(x, out);
	return true;
}

const char *
xp_name(const struct xp *x)
{
	return x->ops->name;
}

struct xp_recv *
xp_recv_new(const struct iovec *iov, int niov, uint64_t cookie)
{
	struct xp_recv *r = malloc(sizeof(*r) + (size_t)niov * sizeof(*iov));
	int i;

	if (r == NULL)
		return NULL;
	r->next = NULL;
	r->cookie = cookie;
	r->slot = 0;
	r->niov = niov;
	r->len = 0;
	for (i = 0; i < niov; i++) {
		r->iov[i] = iov[i];
		r->len += iov[i].iov_len;
	}
	return r;
}

void
xp_recvq_push(struct xp_recvq *q, struct xp_recv *r)
{
	r->next = NULL;
	if (q->tail != NULL)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
}

struct xp_recv *
xp_recvq_pop(struct xp_recvq *q)
{
	struct xp_recv *r = q->head;

	if (r == NULL)
		return NULL;
	q->head = r->next;
	if (q->head == NULL)
		q->tail = NULL;
	return r;
}

void
xp_recvq_clear(struct xp_recvq *q)
{
	struct xp_recv *r;

	while ((r = xp_recvq_pop(q)) != NULL)
		free(r);
}

void
xp_free(struct xp *x)
{
	if (x != NULL)
		x->ops->free(x);
}

const struct sockaddr_storage *
xp_addr_find(const struct xp_addr *t, size_t n, uint32_t rank)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (t[mid].rank == rank)
			return &t[mid].addr;
		if (t[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct xp_addr *
xp_addr_copy(const struct xp_addr *t, size_t n)
{
	struct xp_addr *c = n ? malloc(n * sizeof(*c)) : NULL;

	if (c != NULL)
		memcpy(c, t, n * sizeof(*c));
	return c;
}
