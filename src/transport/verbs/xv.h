/* SPDX-License-Identifier: MIT */
/*
 * xv - the RDMA verbs transport (see xport.h), over rdma_cm.
 *
 * Each schedule neighbour gets two reliable-connected queue pairs: one for
 * blocks, sent with an immediate value (the block number) into receives
 * posted before the ready-for-block signal goes out, and one for those
 * signals, small sends under credit-based flow control.  The member of
 * lower rank connects both, binding its source address; the private data
 * of the request names the transfer and the ranks, and the daemon routes
 * it to the job (xv_accept).
 *
 * Memory: blocks are sent straight from memory registered with xp_reg()
 * (the sender's mapped source files, read-only; a receiver's destination
 * mappings, writable) and received straight into it: no copy.  A block
 * made of more pieces than a work request takes (many small files), or
 * in memory that is not registered (a receiver's mapping the device
 * could not register), goes through a ring of registered bounce buffers
 * and a copy; the rings are registered when the transport is created,
 * before data flows.  xp_stats() counts the bytes that took each way.
 */
#ifndef RDMCP_XV_H
#define RDMCP_XV_H

#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "util/log.h"
#include "proto/proto.h"
#include "transport/verbs/verbs.h"
#include "transport/xport.h"

struct xv_cfg {
	uv_loop_t *loop;
	struct vb *vb;
	struct vb_dev *dev;		/* serves `bind` */
	uint8_t token[PROTO_TOKEN_LEN];
	uint32_t rank;
	uint32_t n;
	/* the neighbours' rdma_cm addresses (IP and port), sorted by rank,
	 * copied */
	const struct xp_addr *peers;
	size_t npeers;
	const struct sockaddr_storage *bind;	/* our source address */
	uint32_t block_size;
	unsigned window;		/* receives posted ahead at most */
	unsigned connect_timeout_ms;
};

/* The largest window the transport supports for a block size: its bounce
 * ring holds that many blocks, within a fixed memory budget. */
unsigned xv_max_window(uint32_t block_size);

/* Create the transport and register its rings.  Explains failures (e.g.
 * the locked-memory limit). */
int xv_new(const struct xv_cfg *cfg, struct xp **out, struct rd_err *err);

/* What a connection request says. */
struct xv_hello {
	uint8_t token[PROTO_TOKEN_LEN];
	uint32_t from;
	uint32_t to;
	uint8_t kind;		/* data or signal queue pair */
};

/* Parse a connection request's private data; -EBADMSG if it is not ours. */
int xv_parse_hello(const void *pdata, uint8_t len, struct xv_hello *out);

/* Take over an incoming connection request (its rdma_cm_id) for this
 * transport.  On failure the caller rejects it. */
int xv_accept(struct xp *x, struct rdma_cm_id *id,
	       const struct xv_hello *h);

#endif
