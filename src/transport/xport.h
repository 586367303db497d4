/* SPDX-License-Identifier: MIT */
/*
 * xport - the transport interface the engine runs on.
 *
 * A transport instance (struct xp) holds one member's reliable connections
 * to its schedule neighbours within one transfer, addressed by rank.  It
 * knows nothing of files or schedules.  The calls mirror RDMA verbs so that
 * TCP and verbs implement them alike:
 *
 *   - register memory ranges that blocks are sent from or received into;
 *   - connect to a peer (the member of lower rank connects; the transport
 *     reports connections in either direction through `connected`);
 *   - post a receive into given memory, before telling the peer it may
 *     send (so a block never arrives without a place to go);
 *   - send a block from given memory, carrying a 32-bit immediate value;
 *   - send small signals (ready-for-block); a signal may overtake blocks
 *     sent before it that have not begun to leave (TCP), never the other
 *     way round, and signals keep their order among themselves;
 *   - report completions and failures as events on the event loop.
 *
 * Posted receives on one connection complete in the order they were
 * posted; sends on one connection are delivered in order.  A call that
 * fails returns -errno and produces no event; later failures arrive as
 * `lost`.  After xp_free() no event is delivered.
 */
#ifndef RDMCP_XPORT_H
#define RDMCP_XPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

struct xp;

/* Where a neighbour listens: tables of them are sorted by rank. */
struct xp_addr {
	uint32_t rank;
	struct sockaddr_storage addr;
};

/* The address of `rank` in a table of n sorted by rank, or NULL. */
const struct sockaddr_storage *xp_addr_find(const struct xp_addr *t,
					    size_t n, uint32_t rank);

/* A copy of a table of n (malloc'd; NULL if out of memory, or if n is
 * 0). */
struct xp_addr *xp_addr_copy(const struct xp_addr *t, size_t n);

struct xp_events {
	/* A connection to `peer` is up (status 0) or could not be made. */
	void (*connected)(void *ctx, uint32_t peer, int status);
	/* A posted receive filled up with a block carrying `imm`. */
	void (*recv_done)(void *ctx, uint32_t peer, uint64_t cookie,
			  uint32_t imm);
	/* The block of the first receive posted for `peer` is nearly in
	 * (transports that can tell: TCP): time to let the next sender
	 * start. */
	void (*recv_nearly)(void *ctx, uint32_t peer, uint64_t cookie);
	/* Optional: the first bytes of that block came (for the trace). */
	void (*recv_begins)(void *ctx, uint32_t peer, uint64_t cookie);
	/* A send finished: its memory may be reused (0), or it failed. */
	void (*send_done)(void *ctx, uint32_t peer, uint64_t cookie,
			  int status);
	/* A signal from `peer`. */
	void (*signal)(void *ctx, uint32_t peer, uint64_t value);
	/* The connection to `peer` ended: 0 when the peer closed it in
	 * order, else -errno. */
	void (*lost)(void *ctx, uint32_t peer, int status);
};

/* Where block bytes went, counted by transports that can tell (verbs):
 * straight between the network and the caller's memory, or through a
 * copy in a buffer of the transport's own. */
struct xp_stats {
	uint64_t recv_placed;	/* received into their final memory */
	uint64_t recv_copied;	/* received into a bounce buffer, copied */
	uint64_t send_direct;	/* sent from the caller's memory */
	uint64_t send_copied;	/* copied into a send buffer, sent */
};

struct xp_ops {
	const char *name;
	int (*reg)(struct xp *x, void *addr, size_t len, bool writable,
		   int fd, uint64_t off);
	int (*connect)(struct xp *x, uint32_t peer);
	int (*post_recv)(struct xp *x, uint32_t peer, const struct iovec *iov,
			 int niov, uint64_t cookie);
	int (*send)(struct xp *x, uint32_t peer, const struct iovec *iov,
		    int niov, uint32_t imm, uint64_t cookie);
	int (*signal)(struct xp *x, uint32_t peer, uint64_t value);
	void (*finish)(struct xp *x, uint32_t peer);
	void (*free)(struct xp *x);
	void (*stats)(const struct xp *x, struct xp_stats *out); /* optional */
	int (*send_landing)(struct xp *x, uint32_t peer,	/* optional */
			    const struct iovec *iov, int niov, uint32_t imm,
			    uint64_t cookie, uint32_t from,
			    uint64_t recv_cookie);
};

/* A posted receive as both transports keep it: a copy of the caller's
 * iovecs, queued per peer in the order posted (receives complete in that
 * order). */
struct xp_recv {
	struct xp_recv *next;
	uint64_t cookie;
	uint64_t len;		/* bytes the iovecs hold */
	uint32_t slot;		/* the transport's own (verbs: bounce slot) */
	int niov;
	struct iovec iov[];
};

struct xp_recvq {
	struct xp_recv *head, *tail;
};

/* A new receive for iov[0..niov) and cookie, or NULL (ENOMEM). */
struct xp_recv *xp_recv_new(const struct iovec *iov, int niov,
			    uint64_t cookie);

/* Queue r last. */
void xp_recvq_push(struct xp_recvq *q, struct xp_recv *r);

/* Take the first receive off the queue (NULL if empty); free() it. */
struct xp_recv *xp_recvq_pop(struct xp_recvq *q);

/* Free every queued receive. */
void xp_recvq_clear(struct xp_recvq *q);

/* Every transport instance begins with this. */
struct xp {
	const struct xp_ops *ops;
	struct xp_events ev;
	void *ctx;
	char errmsg[512];	/* why the last call failed, if known */
};

/* Route events to `ev`/`ctx` (the engine does this when it starts). */
void xp_set_events(struct xp *x, const struct xp_events *ev, void *ctx);

/* Register [addr, addr + len) for sends (and receives if writable).  If
 * fd >= 0 the same bytes are at offset `off` of file fd (a mapping of
 * it), kept open until xp_free(): a transport may move them through the
 * file instead (TCP: sendfile and splice, no copy in our memory). */
int xp_reg(struct xp *x, void *addr, size_t len, bool writable, int fd,
	   uint64_t off);

/* Open the connection to `peer`; `connected` reports the outcome. */
int xp_connect(struct xp *x, uint32_t peer);

/* Post a receive for the next block from `peer` into `iov`. */
int xp_post_recv(struct xp *x, uint32_t peer, const struct iovec *iov,
		 int niov, uint64_t cookie);

/* Send a block to `peer` from `iov` (registered memory). */
int xp_send(struct xp *x, uint32_t peer, const struct iovec *iov, int niov,
	    uint32_t imm, uint64_t cookie);

/* Can this transport pass a block on as it lands (xp_send_landing)? */
bool xp_can_send_landing(const struct xp *x);

/* Send to `peer` a block that is still landing: the first receive posted
 * for `from`, `recv_cookie`, has begun (recv_begins) and fills `iov`;
 * its bytes go on to `peer` as they land (TCP: cut-through, a relay's
 * hop costing a few packets instead of a block).  send_done follows the
 * receive's recv_done.  Should that receive never complete (`from` is
 * lost), neither does this send: the caller gives the transport up.
 * -ENOTSUP where the transport cannot (then xp_send once it is in). */
int xp_send_landing(struct xp *x, uint32_t peer, const struct iovec *iov,
		    int niov, uint32_t imm, uint64_t cookie, uint32_t from,
		    uint64_t recv_cookie);

/* Send a small signal to `peer`. */
int xp_signal(struct xp *x, uint32_t peer, uint64_t value);

/* Done with `peer`: its connection closes in order once queued sends are
 * out, and no event for it follows. */
void xp_finish(struct xp *x, uint32_t peer);

/* Why the last call failed, in words, or NULL if the transport cannot
 * say more than the error number. */
const char *xp_errmsg(const struct xp *x);

/* Where the block bytes moved so far went (struct xp_stats); false, and
 * *out zeroed, if the transport does not count them (TCP). */
bool xp_stats(const struct xp *x, struct xp_stats *out);

/* The transport's name ("tcp", "verbs"). */
const char *xp_name(const struct xp *x);

/* Close every connection and release; NULL is a no-op. */
void xp_free(struct xp *x);

#endif
