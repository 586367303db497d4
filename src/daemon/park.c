/* SPDX-License-Identifier: MIT */
/*
 * park - a job's data connections and RDMA requests that come before its
 * START, held until the engine can take them (transfer_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "transport/tcp/tcp.h"
#include "transport/verbs/xv.h"
#include "daemon/transfer_int.h"

static void
drop_parked_rdma(struct transfer *j)
{
	struct parked_rdma *pr;

	while ((pr = j->parked_rdma) != NULL) {
		j->parked_rdma = pr->next;
		rdma_reject(pr->id, NULL, 0);
		rdma_destroy_id(pr->id);
		free(pr);
	}
}

void
transfer_drop_parked(struct transfer *j)
{
	struct parked *pk;

	while ((pk = j->parked) != NULL) {
		j->parked = pk->next;
		conn_free(pk->c);
		free(pk);
	}
	drop_parked_rdma(j);
}

static int
adopt(struct transfer *j, struct conn *c, uint32_t from, uint32_t to)
{
	if (to != j->ro->rank || j->ro->transport != TRANSPORT_TCP)
		return -EPROTO;
	return tcp_adopt(eng_xport(j->eng), c, from);
}

int
transfer_adopt_parked(struct transfer *j)
{
	struct parked *pk;
	struct parked_rdma *pr;
	int rc = 0;

	while (rc == 0 && (pk = j->parked) != NULL) {
		j->parked = pk->next;
		rc = adopt(j, pk->c, pk->from, pk->to);
		if (rc < 0)
			conn_free(pk->c);
		free(pk);
	}
	while (rc == 0 && (pr = j->parked_rdma) != NULL) {
		rc = xv_accept(eng_xport(j->eng), pr->id, &pr->hello);
		if (rc < 0)
			break;		/* rejected with the rest below */
		j->parked_rdma = pr->next;
		free(pr);
	}
	return rc;
}

static int
parked_header(void *ctx, struct conn *c, const struct frame *f,
	      const struct conn_seg **segs, int *nseg)
{
	return -EPROTO;		/* nothing may come before START */
}

static int
parked_frame(void *ctx, struct conn *c, const struct frame *f,
	     const uint8_t *body)
{
	return -EPROTO;
}

static void
parked_close(void *ctx, struct conn *c, int status)
{
	struct parked *pk = ctx, **pp;

	for (pp = &pk->j->parked; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == pk) {
			*pp = pk->next;
			break;
		}
	}
	conn_free(c);
	free(pk);
}

static const struct conn_ops parked_ops = {
	.on_header = parked_header,
	.on_frame = parked_frame,
	.on_close = parked_close,
};

bool
transfer_matches(const struct transfer *j, const uint8_t *token)
{
	return j->job != NULL && j->state != JS_ENDED &&
	       memcmp(j->job->token, token, PROTO_TOKEN_LEN) == 0;
}

int
transfer_add_data(struct transfer *j, struct conn *c, uint32_t from, uint32_t to)
{
	struct parked *pk;

	if (j->state == JS_RUNNING)
		return adopt(j, c, from, to);
	if (j->state != JS_READY)
		return -ENOENT;
	pk = calloc(1, sizeof(*pk));
	if (pk == NULL)
		return -ENOMEM;
	pk->j = j;
	pk->c = c;
	pk->from = from;
	pk->to = to;
	pk->next = j->parked;
	j->parked = pk;
	conn_pause(c);
	conn_set_owner(c, &parked_ops, pk);
	/* the job's timeout from here on, as the member at the other end
	 * keeps it: it must hear our keepalives while we wait for START */
	conn_keepalive(c, 0, j->job->timeout_ms);
	return 0;
}

int
transfer_add_rdma(struct transfer *j, struct rdma_cm_id *id,
	      const struct xv_hello *h)
{
	struct parked_rdma *pr;

	if (j->state == JS_RUNNING && j->ro->transport == TRANSPORT_VERBS)
		return h->to == j->ro->rank
			       ? xv_accept(eng_xport(j->eng), id, h)
			       : -EPROTO;
	if (j->state != JS_READY || j->dev == NULL)
		return -ENOENT;
	pr = calloc(1, sizeof(*pr));
	if (pr == NULL)
		return -ENOMEM;
	pr->id = id;
	pr->hello = *h;
	pr->next = j->parked_rdma;
	j->parked_rdma = pr;
	return 0;
}

