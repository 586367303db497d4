/* SPDX-License-Identifier: MIT */
/*
 * xv_int - what the parts of the verbs transport share: its state,
 * and the calls between xfer.c (rings, signals, blocks, the xp
 * operations), peers.c (peers and their queue pairs' connections) and
 * memory.c (the registered memory blocks are sent from and land in).
 * Not for other modules.
 *
 * Events are always the last thing a function does: the owner may react
 * by tearing the transport down on the next loop turn, never during one.
 */
#ifndef RDMCP_XV_INT_H
#define RDMCP_XV_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "transport/ranktab.h"
#include "transport/verbs/slots.h"
#include "transport/verbs/xv.h"

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
#define TAG_PLACED (VB_TAG_MAX - 1)	/* a receive into its final memory */
#define MAX_SGE 16

struct ring {
	uint8_t *mem;
	size_t len;
	uint32_t slot_size;
	struct slots *free;
	struct ibv_mr *mr;
};

/* Memory given with xp_reg() (memory.c). */
struct region {
	uint8_t *addr;
	size_t len;
	bool writable;		/* receives may land in it */
	bool failed;		/* a chunk could not be registered */
	size_t chunk;		/* bytes per registration */
	size_t nchunks;
	struct ibv_mr **mrs;	/* per chunk; NULL: not (yet) registered */
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
	struct xv *x;
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

struct xv {
	struct xp base;
	struct xv_cfg cfg;
	struct xp_addr *addrs;		/* of the neighbours, by rank */
	size_t naddrs;
	struct sockaddr_storage bind;
	struct vb *vb;
	struct vb_dev *dev;
	struct ranktab peers;		/* struct vpeer by rank */
	struct region *regions;
	size_t nregions;
	size_t region_hint;		/* where the last lookup found one */
	struct ring rring, sring;	/* receive and send bounce buffers */
	struct psend *whead, *wtail;	/* sends waiting for a bounce slot */
	int max_sge;
	uint32_t sq_cap;		/* data send queue entries per peer */
	uv_timer_t timer;		/* connect deadlines */
	struct xp_stats stats;
};

extern const struct xp_ops xv_ops;

/* xp_reg() of the verbs transport: read-only memory is registered at
 * once, writable memory chunk by chunk as receives reach it. */
int xv_reg(struct xp *xp, void *addr, size_t len, bool writable, int fd,
	   uint64_t off);

/* The pieces as scatter-gather entries (at most x->max_sge) if all lie in
 * registered memory (writable, for a receive: its chunks are registered
 * now if need be); the number of entries, or 0 if they do not. */
int xv_in_place(struct xv *x, const struct iovec *iov, int niov, bool write,
		struct ibv_sge *sge);

/* Deregister and forget every region. */
void xv_regions_free(struct xv *x);

/* xfer.c */

/* Post the signal queue pair's receive buffers (first time: allocate and
 * register them): 0 or -errno, with words in err if not NULL. */
int xv_sig_buffers(struct vpeer *p, struct rd_err *err);

/* Completions of the data and the signal queue pairs. */
void xv_on_data_wc(void *ctx, uint32_t tag, const struct ibv_wc *wc);
void xv_on_sig_wc(void *ctx, uint32_t tag, const struct ibv_wc *wc);

/* peers.c */

/* The peer of this rank, or NULL. */
struct vpeer *xv_peer_find(const struct xv *x, uint32_t rank);

/* A new peer for `rank`, its queue pairs not created yet: 0 or -ENOMEM. */
int xv_peer_add(struct xv *x, uint32_t rank, struct vpeer **out);

/* Destroy a peer's queue pairs and ids, then free its memory. */
void xv_peer_free(struct xv *x, struct vpeer *p);

/* Report p connected (status 0) or not (status < 0), once. */
void xv_emit_connected(struct vpeer *p, int status);

/* Report p lost (or, never up, not connected), once. */
void xv_emit_lost(struct vpeer *p, int status);

/* The rdma_cm events of a queue pair. */
void xv_on_cm(struct vb_cm *h, struct rdma_cm_event *ev);

/* Start connecting queue pair q to `to`: 0 or -errno. */
int xv_connect_qp(struct xv *x, struct vqp *q,
		  const struct sockaddr_storage *to);

/* Every 200 ms: peers not connected by their deadline fail. */
void xv_on_deadline(uv_timer_t *t);

/* xp operation: connect to `peer` (of higher rank). */
int xv_connect(struct xp *xp, uint32_t peer);

#endif
