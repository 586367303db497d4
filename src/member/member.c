/* SPDX-License-Identifier: MIT */
/*
 * member - a group member's transport and engine (see member.h).
 */
#include "member/member.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/net.h"
#include "transport/tcp/tcp.h"
#include "transport/verbs/xv.h"

/* The neighbours' addresses as a transport takes them: their TCP
 * listeners, or with `rdma` their rdma_cm ports (malloc'd; NULL if out of
 * memory or if there are none). */
static struct xp_addr *
peer_addrs(const struct member_cfg *cfg, bool rdma)
{
	struct xp_addr *a = calloc(cfg->npeers ? cfg->npeers : 1, sizeof(*a));
	uint32_t i;

	for (i = 0; a != NULL && i < cfg->npeers; i++) {
		a[i].rank = cfg->peers[i].rank;
		a[i].addr = cfg->peers[i].addr;
		if (rdma)
			net_set_port(&a[i].addr, cfg->peers[i].rdma_port);
	}
	return a;
}

/* Are all the neighbours on this machine (loopback addresses)? */
static bool
all_local(const struct member_cfg *cfg)
{
	uint32_t i;

	for (i = 0; i < cfg->npeers; i++)
		if (!net_is_loopback(&cfg->peers[i].addr))
			return false;
	return true;
}

static int
make_tcp(const struct member_cfg *cfg, const struct eng_cfg *ec,
	 struct xp **xp)
{
	struct tcp_cfg xc = {
		.loop = ec->loop, .rank = ec->rank, .n = ec->n,
		.npeers = cfg->npeers, .bind = cfg->bind,
		.connect_timeout_ms = cfg->connect_timeout_ms,
		.timeout_ms = cfg->timeout_ms, .block_size = cfg->block_size,
	};
	struct xp_addr *peers = peer_addrs(cfg, false);
	int rc;

	if (peers == NULL)
		return -ENOMEM;
	memcpy(xc.token, cfg->token, PROTO_TOKEN_LEN);
	xc.peers = peers;
	rc = tcp_new(&xc, xp);
	free(peers);
	return rc;
}

/* Over verbs, `window` receives are posted into bounce buffers: rank 0
 * receives nothing and needs one slot, the others the window. */
static int
make_verbs(const struct member_cfg *cfg, const struct eng_cfg *ec,
	   unsigned window, struct xp **xp, struct rd_err *err)
{
	struct xv_cfg vc = {
		.loop = ec->loop, .vb = cfg->vb, .dev = cfg->dev,
		.rank = ec->rank, .n = ec->n, .bind = cfg->bind,
		.block_size = cfg->block_size,
		.window = ec->rank == 0 ? 1 : window,
		.connect_timeout_ms = cfg->connect_timeout_ms,
	};
	int rc;

	if (cfg->dev == NULL || cfg->bind == NULL)
		return rd_errf(err, -EPROTO, "the group runs over verbs, but "
			       "this member has no RDMA device");
	memcpy(vc.token, cfg->token, PROTO_TOKEN_LEN);
	vc.peers = peer_addrs(cfg, true);
	vc.npeers = cfg->npeers;
	if (vc.peers == NULL)
		return -ENOMEM;
	rc = xv_new(&vc, xp, err);
	free((void *)vc.peers);
	return rc;
}

/* The engine's receive window over verbs: the one asked for (or the
 * default), at most what the bounce ring of this block size holds. */
static unsigned
verbs_window(const struct member_cfg *cfg, unsigned asked)
{
	unsigned window = asked ? asked : ENG_DEFAULT_WINDOW;

	if (window > xv_max_window(cfg->block_size))
		window = xv_max_window(cfg->block_size);
	return window;
}

int
member_start(const struct member_cfg *cfg, const struct eng_cfg *ec,
	     struct eng **out, struct rd_err *err)
{
	struct eng_cfg e = *ec;
	int rc;

	*out = NULL;
	e.xp = NULL;
	e.connect_wait_ms = cfg->connect_timeout_ms + cfg->timeout_ms;
	if (cfg->transport == TRANSPORT_VERBS) {
		e.window = verbs_window(cfg, ec->window);
		rc = make_verbs(cfg, &e, e.window, &e.xp, err);
	} else {
		/* one block at a time on each link (see engine.h): what TCP
		 * would otherwise share among flows, and lose to incast */
		e.max_sends = 1;
		e.admit_one = true;
		/* between processes of this machine a link is a memory copy
		 * and every member shares the CPUs: passing a block on in the
		 * pieces it lands in costs more calls than it saves (figures:
		 * docs/performance.md, its constants) */
		e.cut_through = !all_local(cfg);
		rc = make_tcp(cfg, &e, &e.xp);
	}
	if (rc == 0 && cfg->reg != NULL)
		rc = cfg->reg(ec->ctx, e.xp, err);
	if (rc == 0)
		rc = eng_new(&e, out);
	if (rc < 0) {
		xp_free(e.xp);
		return rc;
	}
	rc = eng_start(*out);
	if (rc < 0) {
		eng_free(*out);
		*out = NULL;
	}
	return rc;
}
