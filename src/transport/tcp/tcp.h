/* SPDX-License-Identifier: MIT */
/*
 * tcp - the TCP transport (see xport.h), one framed connection per peer.
 *
 * Outgoing connections open with a HELLO naming the transfer and both
 * ranks.  Incoming ones arrive at whoever listens (the daemon), which reads
 * the HELLO and hands the connection over with tcp_adopt().  Blocks are
 * read straight into the posted receive memory; sends go straight from the
 * caller's memory.
 */
#ifndef RDMCP_TCP_H
#define RDMCP_TCP_H

#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "transport/tcp/conn.h"
#include "proto/proto.h"
#include "transport/xport.h"

struct tcp_cfg {
	uv_loop_t *loop;
	uint8_t token[PROTO_TOKEN_LEN];
	uint32_t rank;
	uint32_t n;
	/* The addresses of the neighbours we connect to (copied; others may
	 * be there too), sorted by rank. */
	const struct xp_addr *peers;
	size_t npeers;
	/* Source address for outgoing connections, or NULL. */
	const struct sockaddr_storage *bind;
	unsigned connect_timeout_ms;
	unsigned timeout_ms;	/* keepalive: a silent peer is dead after */
	uint32_t block_size;	/* the job's, to pace the links */
};

/* Create the transport for one member of one transfer. */
int tcp_new(const struct tcp_cfg *cfg, struct xp **out);

/* Take over an accepted connection whose HELLO came from rank `from` (the
 * HELLO frame itself has been consumed).  On failure the caller keeps the
 * connection. */
int tcp_adopt(struct xp *x, struct conn *c, uint32_t from);

/* How long a connection done with its peer waits for the peer's end before
 * it closes (conn_linger): the transfer's timeout, at most 10 s; without a
 * timeout (0), 10 s.  Never 0: closing over unread input resets the
 * connection and loses our last bytes on their way. */
unsigned tcp_linger_ms(unsigned timeout_ms);

#endif
