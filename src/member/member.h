/* SPDX-License-Identifier: MIT */
/*
 * member - one member of a running group: its transport, TCP or RDMA
 * verbs, made for the group, and its engine started on it.
 *
 * The one place that knows how a group's transport is set up, for the
 * sender's rank 0 (group.c) and for each daemon's job (daemon/run.c) alike:
 * which addresses each transport dials (verbs: the members' rdma_cm
 * ports), how the verbs receive window is bounded by its bounce ring, how
 * long a member waits for a neighbour that never connects.
 */
#ifndef RDMCP_MEMBER_H
#define RDMCP_MEMBER_H

#include <stdint.h>
#include <sys/socket.h>

#include "engine/engine.h"
#include "util/log.h"
#include "proto/proto.h"

struct vb;
struct vb_dev;

struct member_cfg {
	enum proto_transport transport;	/* TRANSPORT_TCP or _VERBS */
	uint8_t token[PROTO_TOKEN_LEN];	/* the transfer's */
	/* The neighbours' TCP addresses (the daemons' listeners) and, over
	 * verbs, rdma_cm ports, sorted by rank (others may be there too). */
	const struct roster_peer *peers;
	uint32_t npeers;
	/* Our source address (NULL over TCP: the system's choice). */
	const struct sockaddr_storage *bind;
	unsigned connect_timeout_ms;
	unsigned timeout_ms;		/* a silent peer is dead after this */
	/* verbs: the process's RDMA state and the device serving `bind` */
	struct vb *vb;
	struct vb_dev *dev;
	uint32_t block_size;
	/* Optional: register the memory blocks are sent from (xp_reg) once
	 * the transport exists, before data flows; 0 or -errno, explained in
	 * err.  Called with the engine's ctx. */
	int (*reg)(void *ctx, struct xp *xp, struct rd_err *err);
};

/* Make the transport and start an engine on it, configured as `ec` says
 * but for what this function decides: ec->xp, ec->connect_wait_ms (the
 * connect timeout plus the timeout: a backstop, as a neighbour whose
 * connect failed tells the sender, which aborts the group), over TCP the
 * pacing (admit_one, max_sends) and cut_through (unless every neighbour
 * is on this machine), and over verbs a window no larger than the bounce
 * ring holds.  Returns 0 with
 * *out running (eng_free it), or -errno with a reason in err when there is
 * more to say than the error number (nothing is left to free). */
int member_start(const struct member_cfg *cfg, const struct eng_cfg *ec,
		 struct eng **out, struct rd_err *err);

#endif
