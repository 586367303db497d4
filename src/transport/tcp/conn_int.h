/* SPDX-License-Identifier: MIT */
/*
 * conn_int - what the parts of conn share: the connection's state, and
 * the calls between conn.c (life cycle, events, connecting, listening,
 * keepalive), read.c (reading frames into memory or files) and write.c
 * (writing them with sendmsg and sendfile).  Not for other modules.
 */
#ifndef RDMCP_CONN_INT_H
#define RDMCP_CONN_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "transport/tcp/conn.h"
#include "util/net.h"

#define CONN_DEFAULT_BODY_LIMIT (64u << 10)
#define PIPE_BYTES (1u << 20)		/* splice's pipe, at most */
#define BOUNCE_BYTES (256u << 10)	/* reads into files without splice */
#define READ_BUDGET (4u << 20)		/* bytes read per wake-up, at most */
#define MAX_IOV 64
#define IBUF_BYTES 4096u		/* headers and small frames, read ahead */

/* A frame queued for writing: its header, then its segments. */
struct wreq {
	struct wreq *next;
	uint64_t cookie;
	bool notify;		/* conn_send_segs (a block): on_sent due; a
				 * signal may pass it while none of it is
				 * written */
	int status;		/* once done */
	uint64_t ready;		/* payload bytes that may be written now
				 * (conn_send_growing; else all) */
	uint64_t payload_done;	/* payload bytes written */
	uint64_t held_at;	/* `ready` when the landed bytes left over
				 * after whole segments were held (0: none) */
	uint8_t hdr[PROTO_FRAME_LEN];
	size_t hdr_done;
	int nseg, seg;		/* segments, the one being written */
	size_t seg_done;	/* bytes of it written */
	struct conn_seg segs[];
};

struct conn {
	uv_loop_t *loop;
	uv_poll_t poll;
	uv_timer_t timer;	/* connect timeout, keepalive, linger */
	uv_idle_t idle;		/* on_sent callbacks due: no epoll change */
	uv_timer_t deadline;	/* conn_set_deadline */
	int fd;
	int events;		/* what the poll watches */
	const struct conn_ops *ops;
	void *ctx;
	char peer[NET_ADDRSTRLEN];

	/* reading */
	uint8_t hdr[PROTO_FRAME_LEN];
	size_t hdr_got;
	struct frame f;
	bool in_payload;
	uint64_t got;		/* payload bytes read */
	struct conn_seg *segs;	/* the owner's segments for the payload */
	int nseg, segs_cap, seg;
	size_t seg_got;		/* bytes of segment seg read */
	uint8_t *body;		/* or our own buffer, */
	uint64_t body_cap;	/* grown as the payload comes */
	uint64_t body_limit;
	uint64_t watch;		/* on_payload_low at this many bytes left */
	bool watching;
	int pipe[2];		/* splice: socket -> pipe -> file */
	bool no_splice;		/* splice refused: read and pwrite */
	uint8_t *bounce;
	uint8_t *ibuf;		/* read ahead: ibuf[ipos, ilen) not taken */
	size_t ipos, ilen;
	bool drained;		/* the last socket read found no more */

	/* writing */
	struct wreq *whead, *wtail;
	struct wreq *done, *done_tail;	/* written, on_sent still due */
	int werr;		/* a write failed: the connection is broken */
	int mss;		/* TCP's segment size, once asked (0: not yet;
				 * -1: unknown, or too big to round to) */
	unsigned owner_writes;	/* conn_send frames not yet reported */
	bool flush_due;		/* small frames queued: written from the idle
				 * callback, together, at the end of the turn */

	uint64_t last_rx, last_tx;	/* loop time of last activity */
	uint64_t tx_gap;	/* longest silence of ours, since keepalive */
	unsigned ka_interval, ka_timeout;

	int handles;		/* open libuv handles */
	bool connecting;
	bool paused;
	bool dead;		/* on_close reported */
	bool closing;		/* handles are closing */
	bool freed;		/* the owner let go */
	bool shut, shut_done;	/* conn_shutdown asked, and done */
	bool lingering;		/* conn_linger: reading to the peer's end */
};

/* conn.c */

/* Set what the poll watches from the state; report finished frames from
 * an idle callback. */
void conn_update(struct conn *c);

/* The connection broke: tell the owner once, fail what is queued. */
void conn_die(struct conn *c, int status);

/* Close the socket and the handles now (memory goes when libuv is done). */
void conn_close_handles(struct conn *c);

/* We send now: the silence before counts towards the longest. */
void conn_note_tx(struct conn *c);

/* A system call's result: bytes, or 0 (a read: the peer's end),
 * -EAGAIN, -errno. */
static inline ssize_t
conn_result(ssize_t n)
{
	return n < 0 ? -errno : n;
}

/* n more bytes of segs done: advance *seg and *done (bytes of segs[*seg]
 * done) over them, to the next segment as each is full. */
void conn_segs_advance(const struct conn_seg *segs, int *seg, size_t *done,
		       size_t n);

/* read.c */

/* Read what the socket (or the read-ahead) holds, frame by frame, and
 * hand finished frames to the owner. */
void conn_read(struct conn *c);

/* write.c */

/* Is frame w's next byte one its owner has not made ready yet, or
 * held back until more is (write.c, cut_write_len)? */
bool conn_wreq_waits(const struct wreq *w);

/* Write what the socket takes, then report finished frames. */
void conn_write(struct conn *c);

/* Write what the kernel takes; finished frames move to the done list.
 * Returns 0, or -errno (the connection is broken). */
int conn_flush(struct conn *c);

/* Frames left unwritten when the connection breaks: reported failed. */
void conn_fail_queued(struct conn *c, int status);

/* The on_sent callbacks of finished frames; the owner may free us in
 * one, and then hears no more. */
void conn_report_sent(struct conn *c);

#endif
