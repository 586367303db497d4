/* SPDX-License-Identifier: MIT */
/*
 * conn - one framed TCP connection on the event loop.
 *
 * Frames (proto.h) are read as they come: for each header the owner says
 * where the payload goes (its own segments, e.g. a block of a file, or a
 * bounded buffer the connection allocates), then gets the whole frame.
 * Frames are written in order (but conn_send_signal's, which may pass
 * frames not yet begun), the payload straight from the caller's
 * segments.  A segment whose bytes are in a file moves between file and
 * socket inside the kernel: sendfile(2) out, splice(2) in, never through
 * our memory; other segments are written from and read into memory.
 *
 * Lifetime: the owner calls conn_free() (or conn_linger()) exactly once.
 * on_close reports a connection that ended before that (peer closed,
 * error); no callback runs after conn_free().  Every callback may call any
 * conn function, including conn_free() on this connection.  No callback
 * runs from inside a conn_* call.
 */
#ifndef RDMCP_CONN_H
#define RDMCP_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <uv.h>

#include "proto/proto.h"

struct conn;

/* A piece of a payload: `len` bytes at `addr`, and, if fd >= 0, the same
 * bytes at offset `off` of file `fd`, which then carries them (addr may be
 * NULL).  Received bytes go to the file when there is one. */
struct conn_seg {
	void *addr;
	size_t len;
	int fd;
	uint64_t off;
};

struct conn_ops {
	/* A header arrived.  Point *segs and *nseg at segments for exactly
	 * f->len payload bytes (kept valid until on_frame), or leave *nseg at
	 * 0 to have the connection buffer it (up to the body limit).  Return
	 * 0, or -errno to drop the connection. */
	int (*on_header)(void *ctx, struct conn *c, const struct frame *f,
			 const struct conn_seg **segs, int *nseg);
	/* A whole frame arrived; body is the buffered payload (NULL when the
	 * payload went to the owner's segments or is empty).  Return 0, or
	 * -errno to drop the connection. */
	int (*on_frame)(void *ctx, struct conn *c, const struct frame *f,
			const uint8_t *body);
	/* A frame sent with conn_send() left for the kernel (0) or failed. */
	void (*on_sent)(void *ctx, struct conn *c, uint64_t cookie,
			int status);
	/* conn_connect() finished: 0 or -errno (-ETIMEDOUT after the
	 * timeout). */
	void (*on_connect)(void *ctx, struct conn *c, int status);
	/* The connection ended: 0 when the peer closed it between frames,
	 * else -errno. */
	void (*on_close)(void *ctx, struct conn *c, int status);
	/* Optional: at most conn_watch_payload()'s bytes of the frame being
	 * read are still to come (once per frame that asked). */
	void (*on_payload_low)(void *ctx, struct conn *c);
	/* Optional: the first `got` payload bytes of the frame being read
	 * are in the owner's segments (each time more land, the last time
	 * before on_frame). */
	void (*on_payload)(void *ctx, struct conn *c, uint64_t got);
};

/* Open a connection to `to`, from `from` if not NULL.  Completion arrives
 * in on_connect.  Returns 0 or -errno (then no callback follows). */
int conn_connect(uv_loop_t *loop, const struct sockaddr *to,
		 const struct sockaddr *from, unsigned timeout_ms,
		 const struct conn_ops *ops, void *ctx, struct conn **out);

/* Take over `fd`, a connected TCP socket (conn_listen's), and start
 * reading.  Returns 0 or -errno (then fd is closed). */
int conn_adopt(uv_loop_t *loop, int fd, const struct conn_ops *ops,
	       void *ctx, struct conn **out);

/* A listening TCP socket. */
struct conn_listener;

/* Listen on `addr` (its port 0: any) and call on_accept with each new
 * connection's socket (ours to conn_adopt() or close), or with a negative
 * errno when accepting failed (e.g. -EMFILE: the connection waits in the
 * kernel).  Returns 0 or -errno. */
int conn_listen(uv_loop_t *loop, const struct sockaddr *addr, int backlog,
		void (*on_accept)(void *ctx, int fd), void *ctx,
		struct conn_listener **out);

/* The address the listener is bound to. */
void conn_listener_address(const struct conn_listener *l,
			   struct sockaddr_storage *out);

/* Stop listening and release; NULL is a no-op. */
void conn_listener_close(struct conn_listener *l);

/* Hand the connection to another owner; later callbacks go there. */
void conn_set_owner(struct conn *c, const struct conn_ops *ops, void *ctx);

/* Largest payload the connection buffers itself (default 64 KiB).  Its
 * buffer grows as the payload comes: a peer that announces a large frame
 * holds no more of our memory than it has sent. */
void conn_set_body_limit(struct conn *c, uint64_t limit);

/* Queue a frame whose payload (f->len bytes in segs; files and memory
 * stay valid until on_sent reports `cookie`).  Returns 0 or -errno (no
 * on_sent then). */
int conn_send_segs(struct conn *c, const struct frame *f,
		   const struct conn_seg *segs, int nseg, uint64_t cookie);

/* conn_send_segs() of a payload whose bytes are not all there yet: only
 * the first `ready` may be written until conn_grow() says more are (a
 * block passed on as it lands).  Until then the frame, once begun, holds
 * back every frame queued behind it.  0 or -errno (no on_sent then). */
int conn_send_growing(struct conn *c, const struct frame *f,
		      const struct conn_seg *segs, int nseg, uint64_t cookie,
		      uint64_t ready);

/* The first `ready` payload bytes of the queued frame sent with `cookie`
 * may be written now.  0, -ENOENT if no such frame is queued, -EPIPE if
 * the connection is broken. */
int conn_grow(struct conn *c, uint64_t cookie, uint64_t ready);

/* conn_send_segs() of memory: f->len bytes in iov. */
int conn_send(struct conn *c, const struct frame *f, const struct iovec *iov,
	      int niov, uint64_t cookie);

/* Queue a frame with a copied payload of f->len bytes and no on_sent. */
int conn_send_copy(struct conn *c, const struct frame *f, const void *body);

/* Queue a frame without payload (f->len 0) and no on_sent, ahead of the
 * conn_send_segs() frames none of whose bytes have been written: a
 * signal about blocks does not wait behind blocks queued before it.  It
 * stays behind every other frame.  -EINVAL if f->len is not 0. */
int conn_send_signal(struct conn *c, const struct frame *f);

/* From on_header: call on_payload_low once at most `left` bytes of this
 * frame's payload are still to come (at once if it is that short). */
void conn_watch_payload(struct conn *c, uint64_t left);

/* Keep at most about `bytes` queued in the kernel but not yet sent
 * (TCP_NOTSENT_LOWAT): a frame is reported sent when it has nearly left,
 * and frames queued on several connections do not share the link for
 * long.  0 or -errno. */
int conn_set_unsent_limit(struct conn *c, unsigned bytes);

/* Stop / restart reading (e.g. while the owner is not ready yet). */
void conn_pause(struct conn *c);
void conn_resume(struct conn *c);

/* Close the write side once queued frames are out; on_close(0) follows
 * when the peer closes its side. */
void conn_shutdown(struct conn *c);

/* Keep the connection alive and watched: send a NOP frame whenever nothing
 * was sent for interval_ms (0: a sixth of timeout_ms), and end it with
 * -ETIMEDOUT when nothing at all arrived for timeout_ms (a dead, frozen
 * or cut-off peer); bytes waiting to be read count as arrived. */
void conn_keepalive(struct conn *c, unsigned interval_ms,
		    unsigned timeout_ms);

/* The same, retuned, for a phase of the exchange that needs other
 * bounds (a daemon's set-up): the silences measured so far stand, the
 * peer's is counted from what last arrived.  Only after conn_keepalive;
 * NULL is a no-op. */
void conn_keepalive_tune(struct conn *c, unsigned interval_ms,
			 unsigned timeout_ms);

/* The silence after which the connection ends with -ETIMEDOUT
 * (conn_keepalive, conn_keepalive_tune), in ms; 0: none. */
unsigned conn_keepalive_timeout(const struct conn *c);

/* End the connection with -ETIME (on_close; a silence beyond the
 * keepalive timeout is -ETIMEDOUT) `ms` from now, whatever arrives
 * meanwhile, keepalives included: a bound on a whole exchange such
 * as a handshake.  Again: from now; 0: no deadline. */
void conn_set_deadline(struct conn *c, unsigned ms);

/* The longest time, in ms, this side went without queueing a frame since
 * conn_keepalive() (up to now): how long the peer may have heard nothing
 * from us, a process that was frozen or starved included.  0 without
 * conn_keepalive(). */
uint64_t conn_longest_silence(struct conn *c);

/* The lease rule both ends of a job keep: has this side been silent to
 * the peer (conn_longest_silence(), into *silence) for 7/8 of timeout_ms
 * or more?  Then the peer, which gives up after timeout_ms, may have
 * given up on us; an eighth is left for the way. */
bool conn_lease_lost(struct conn *c, unsigned timeout_ms, uint64_t *silence);

/* Whether everything queued on c has left and the peer's TCP has
 * acknowledged it: nothing waits here, nothing in the socket (SIOCOUTQ).
 * A sender of advisory frames asks it so as to keep one small segment in
 * flight at a time: with two, a lost-looking tail is probed after two
 * round trips of the idle path, needlessly when the ACK only waits in a
 * queue behind the peer's own data.  NULL: true. */
bool conn_all_acked(const struct conn *c);

/* Our own address on this connection. */
int conn_local(const struct conn *c, struct sockaddr_storage *out);

/* The peer's address; 0 or -errno. */
int conn_remote(const struct conn *c, struct sockaddr_storage *out);

/* "address:port" of the peer, for messages. */
const char *conn_peer(const struct conn *c);

/* Let go of the connection and end it in order: once the frames queued
 * are out, close our side, then read (and drop) what the peer still sends
 * until it closes its side too, or for `ms` at most, and release.  Ending
 * a connection while input waits unread would reset it, and with it the
 * peer's last frames still on the way.  Frames sent with conn_send() must
 * all have been reported by on_sent; otherwise, as after an error, this is
 * conn_free().  NULL is a no-op.  No callback follows. */
void conn_linger(struct conn *c, unsigned ms);

/* Close and release; NULL is a no-op.  No callback follows. */
void conn_free(struct conn *c);

#endif
