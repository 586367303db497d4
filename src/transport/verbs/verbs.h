/* SPDX-License-Identifier: MIT */
/*
 * verbs - what one process shares for RDMA: the rdma_cm event channel and
 * listener, and per device one protection domain, one completion queue and
 * its completion channel, all watched by the event loop.
 *
 * Completions: each owner of work requests (a QP) takes a slot; its
 * requests' wr_id names the slot and a tag of the owner's choosing.  Slot
 * ids are never reused, so completions flushed after the owner let go are
 * dropped, never delivered to freed memory.
 *
 * Polling: after a completion the CQ is polled on every loop turn for
 * 200 us (the papers' hybrid, whose 50 ms took the CPU the kernel's work
 * needed), then the loop sleeps on the completion channel; with
 * `interrupts` it always sleeps.
 *
 * Connection manager events reach the vb_cm handler stored in each
 * rdma_cm_id's context; connection requests arriving at the listener go to
 * the acceptor the owner installed.
 */
#ifndef RDMCP_VERBS_H
#define RDMCP_VERBS_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "util/log.h"
#include "transport/verbs/opts.h"

struct vb;	/* the process's RDMA state */
struct vb_dev;	/* one device: context, PD, CQ, channel */

/* A handler for the events of one rdma_cm_id (id->context points to it). */
struct vb_cm {
	void (*event)(struct vb_cm *h, struct rdma_cm_event *ev);
};

/* Connection requests: the acceptor gets the new id and the private data
 * and returns 0 if it took the id over, or -errno to have it rejected. */
typedef int (*vb_acceptor_fn)(void *ctx, struct rdma_cm_id *id,
			      const void *pdata, uint8_t len);

struct vb_cfg {
	uv_loop_t *loop;
	struct vb_opts opts;	/* device, GID index, polling */
};

/* Load rdma-core (vb_lib_load: -ENOENT, said in err, where a library is
 * missing), then set up the event channel.  Devices open on first use. */
int vb_new(const struct vb_cfg *cfg, struct vb **out, struct rd_err *err);

/* The device that serves local address `addr` (port ignored): opened,
 * checked (active port, --device), with PD and CQ.  With --gid-index, the
 * address is replaced by the one that GID carries.  Explains failures. */
int vb_device_for(struct vb *v, struct sockaddr_storage *addr,
		  struct vb_dev **out, struct rd_err *err);

/* Listen for connection requests on `addr`; the port chosen is written
 * back into it.  Requests go to `fn`. */
int vb_listen(struct vb *v, struct sockaddr_storage *addr, vb_acceptor_fn fn,
	      void *ctx, struct rd_err *err);

/* A new rdma_cm_id on the shared channel, its events to `h`. */
int vb_create_id(struct vb *v, struct vb_cm *h, struct rdma_cm_id **out);

struct ibv_pd *vb_pd(const struct vb_dev *d);
struct ibv_cq *vb_cq(const struct vb_dev *d);
const char *vb_dev_name(const struct vb_dev *d);

/* Register memory on a device; on failure says what limit to raise. */
int vb_reg(struct vb_dev *d, void *addr, size_t len, int access,
	   struct ibv_mr **out, struct rd_err *err);

/* Completion routing.  A slot is an owner of work requests (a QP): its
 * requests carry vb_wr_id(slot, tag) and their completions reach `fn`
 * with the tag; after vb_slot_drop() they are discarded. */
typedef void (*vb_done_fn)(void *ctx, uint32_t tag, const struct ibv_wc *wc);

#define VB_TAG_BITS 20
#define VB_TAG_MAX ((1u << VB_TAG_BITS) - 1)

/* A new slot (never 0), or 0 on ENOMEM. */
uint64_t vb_slot_new(struct vb *v, vb_done_fn fn, void *ctx);
void vb_slot_drop(struct vb *v, uint64_t slot);

static inline uint64_t
vb_wr_id(uint64_t slot, uint32_t tag)
{
	return slot << VB_TAG_BITS | tag;
}

/* Handle every completion already in the device's queue, now.  Before
 * acting on a disconnect: the peer's last block may be waiting there. */
void vb_drain(struct vb_dev *d);

/* Nudge polling after posting work (the CQ may be asleep). */
void vb_kick(struct vb_dev *d);

/* Free everything; every id and QP must be gone.  NULL is a no-op.  The
 * loop must run afterwards for the handles to close. */
void vb_free(struct vb *v);

#endif
