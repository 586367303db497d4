/*
 * conn - framed TCP connection on libuv (see conn.h).
 *
 * The socket is ours (non-blocking), watched with a uv_poll: libuv's own
 * streams can only move bytes through memory, and a block that lives in a
 * file should go out with sendfile(2) and come in with splice(2).
 */
#include "conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "log.h"
#include "net.h"

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
	bool notify;
	int status;		/* once done */
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
	uint8_t *body;		/* or our own buffer */
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
	unsigned owner_writes;	/* conn_send frames not yet reported */

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

static void conn_update(struct conn *c);
static void conn_read(struct conn *c);
static void on_poll(uv_poll_t *h, int status, int events);
static void fail_queued(struct conn *c, int status);
static void report_sent(struct conn *c);

/* ---------------------------------------------------------------------
 * Life cycle
 */

static void
free_wreqs(struct wreq *w)
{
	struct wreq *next;

	for (; w != NULL; w = next) {
		next = w->next;
		free(w);
	}
}

/* Memory goes once the owner let go and libuv is done with the handles. */
static void
conn_release(struct conn *c)
{
	if (c->handles > 0 || !c->freed)
		return;
	free_wreqs(c->whead);
	free_wreqs(c->done);
	free(c->segs);
	free(c->body);
	free(c->bounce);
	free(c->ibuf);
	free(c);
}

static void
on_handle_closed(uv_handle_t *h)
{
	struct conn *c = h->data;

	c->handles--;
	conn_release(c);
}

/* Closing the poll takes the socket out of the loop at once: it can be
 * closed now (and a flood of connections never holds more descriptors
 * than it must). */
static void
conn_close_handles(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->timer, on_handle_closed);
	uv_close((uv_handle_t *)&c->idle, on_handle_closed);
	uv_close((uv_handle_t *)&c->poll, on_handle_closed);
	close(c->fd);
	if (c->pipe[0] >= 0) {
		close(c->pipe[0]);
		close(c->pipe[1]);
	}
	c->fd = c->pipe[0] = c->pipe[1] = -1;
}

/* The connection ended; tell the owner once, unless it already let go,
 * then report the frames it will never send. */
static void
conn_die(struct conn *c, int status)
{
	if (c->lingering) {
		conn_close_handles(c);
		return;
	}
	if (c->dead || c->freed)
		return;
	c->dead = true;
	uv_timer_stop(&c->timer);
	conn_update(c);
	if (c->ops->on_close != NULL)
		c->ops->on_close(c->ctx, c, status);
	fail_queued(c, status < 0 ? status : -EPIPE);
	report_sent(c);
}

static int
conn_init(uv_loop_t *loop, int fd, const struct conn_ops *ops, void *ctx,
	  struct conn **out)
{
	struct conn *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL)
		return -ENOMEM;
	rc = uv_poll_init_socket(loop, &c->poll, fd);
	if (rc < 0) {
		free(c);
		return rc;
	}
	uv_timer_init(loop, &c->timer);
	uv_idle_init(loop, &c->idle);
	c->poll.data = c->timer.data = c->idle.data = c;
	c->handles = 3;
	c->loop = loop;
	c->fd = fd;
	c->pipe[0] = c->pipe[1] = -1;
	c->ops = ops;
	c->ctx = ctx;
	c->body_limit = CONN_DEFAULT_BODY_LIMIT;
	strcpy(c->peer, "?");
	*out = c;
	return 0;
}

static void
on_idle(uv_idle_t *h)
{
	struct conn *c = h->data;

	uv_idle_stop(h);
	report_sent(c);
	if (!c->closing && !c->paused && c->ipos < c->ilen)
		conn_read(c);	/* read ahead while paused */
	if (!c->closing)
		conn_update(c);
}

/* What the poll should watch now.  Finished frames are reported from an
 * idle callback: toggling the poll for them would cost two epoll_ctl
 * calls per frame. */
static void
conn_update(struct conn *c)
{
	int ev = 0;

	if (c->closing)
		return;
	if (c->done != NULL)
		uv_idle_start(&c->idle, on_idle);
	if (c->connecting || c->whead != NULL || (c->shut && !c->shut_done))
		ev |= UV_WRITABLE;
	if (!c->connecting && !c->dead && (!c->paused || c->lingering))
		ev |= UV_READABLE;
	if (c->dead && !c->lingering)
		ev = 0;
	if (ev == c->events)
		return;
	c->events = ev;
	if (ev == 0)
		uv_poll_stop(&c->poll);
	else
		uv_poll_start(&c->poll, ev, on_poll);
}

static void
note_peer(struct conn *c)
{
	struct sockaddr_storage ss;
	int one = 1;

	if (conn_remote(c, &ss) == 0)
		net_format(&ss, c->peer, sizeof(c->peer));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* We send now: the silence before counts towards the longest. */
static void
note_tx(struct conn *c)
{
	uint64_t now = uv_now(c->loop);

	if (now - c->last_tx > c->tx_gap)
		c->tx_gap = now - c->last_tx;
	c->last_tx = now;
}

/* ---------------------------------------------------------------------
 * Reading
 */

static void
frame_done(struct conn *c)
{
	uint8_t *body = c->body;
	struct frame f = c->f;
	int rc;

	c->body = NULL;
	c->in_payload = false;
	c->hdr_got = 0;
	c->got = 0;
	c->watching = false;
	rc = c->ops->on_frame(c->ctx, c, &f, body);
	free(body);
	if (rc < 0)
		conn_die(c, rc);
}

/* Copy the owner's segments, dropping empty ones. */
static int
take_segs(struct conn *c, const struct conn_seg *segs, int nseg)
{
	uint64_t sum = 0;
	int i;

	if (nseg > c->segs_cap) {
		struct conn_seg *p = realloc(c->segs, (size_t)nseg * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		c->segs = p;
		c->segs_cap = nseg;
	}
	c->nseg = 0;
	for (i = 0; i < nseg; i++) {
		if (segs[i].len == 0)
			continue;
		c->segs[c->nseg++] = segs[i];
		sum += segs[i].len;
	}
	c->seg = 0;
	c->seg_got = 0;
	return sum == c->f.len ? 0 : -EINVAL;
}

static int
header_done(struct conn *c)
{
	const struct conn_seg *segs = NULL;
	int nseg = 0, rc;

	rc = frame_decode(c->hdr, &c->f);
	if (rc < 0)
		return rc;
	if (c->f.type == MSG_NOP) {
		c->hdr_got = 0;
		return c->f.len == 0 ? 0 : -EPROTO;
	}
	rc = c->ops->on_header(c->ctx, c, &c->f, &segs, &nseg);
	if (rc < 0 || c->dead || c->freed)
		return rc;
	if (c->f.len == 0) {
		frame_done(c);
		return 0;
	}
	c->in_payload = true;
	c->got = 0;
	if (nseg > 0)
		return take_segs(c, segs, nseg);
	if (c->f.len > c->body_limit)
		return -EMSGSIZE;
	c->body = malloc(c->f.len);
	return c->body != NULL ? 0 : -ENOMEM;
}

/* A read call's result: bytes, or 0 for the peer's end, -EAGAIN, -errno. */
static ssize_t
result(ssize_t n)
{
	return n < 0 ? -errno : n;
}

static int
make_pipe(struct conn *c)
{
	if (c->pipe[0] >= 0)
		return 0;
	if (pipe2(c->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -errno;
	fcntl(c->pipe[1], F_SETPIPE_SZ, PIPE_BYTES);
	return 0;
}

static int
get_bounce(struct conn *c)
{
	if (c->bounce == NULL && (c->bounce = malloc(BOUNCE_BYTES)) == NULL)
		return -ENOMEM;
	return 0;
}

/* The pipe's `left` bytes into file fd at `at`: spliced, or read and
 * written where the file cannot take a splice. */
static int
pipe_to_file(struct conn *c, int fd, loff_t at, size_t left)
{
	ssize_t m;

	while (left > 0 && !c->no_splice) {
		m = splice(c->pipe[0], NULL, fd, &at, left, SPLICE_F_MOVE);
		if (m < 0 && errno == EINVAL)
			c->no_splice = true;
		else if (m <= 0)
			return m < 0 ? -errno : -EIO;
		else
			left -= (size_t)m;
	}
	while (left > 0) {
		if (get_bounce(c) < 0)
			return -ENOMEM;
		m = read(c->pipe[0], c->bounce, left < BOUNCE_BYTES
						     ? left : BOUNCE_BYTES);
		if (m <= 0 || pwrite(fd, c->bounce, (size_t)m, at) != m)
			return m < 0 || errno ? -errno : -EIO;
		at += m;
		left -= (size_t)m;
	}
	return 0;
}

/* Socket -> pipe -> file: up to `len` bytes into segment s, at `off`. */
static ssize_t
splice_in(struct conn *c, const struct conn_seg *s, uint64_t off, size_t len)
{
	ssize_t n;
	int rc;

	if (len > PIPE_BYTES)
		len = PIPE_BYTES;
	n = result(splice(c->fd, NULL, c->pipe[1], NULL, len,
			  SPLICE_F_MOVE | SPLICE_F_NONBLOCK));
	if (n <= 0)
		return n;
	rc = pipe_to_file(c, s->fd, (loff_t)off, (size_t)n);
	return rc < 0 ? rc : n;
}

/* Socket -> buffer -> file, where splice cannot. */
static ssize_t
bounce_in(struct conn *c, const struct conn_seg *s, uint64_t off, size_t len)
{
	ssize_t n;

	if (get_bounce(c) < 0)
		return -ENOMEM;
	n = result(read(c->fd, c->bounce, len < BOUNCE_BYTES ? len
							  : BOUNCE_BYTES));
	if (n > 0 && pwrite(s->fd, c->bounce, (size_t)n, (off_t)off) != n)
		return errno ? -errno : -EIO;
	return n;
}

/* Into the file of segment s. */
static ssize_t
read_file_seg(struct conn *c, const struct conn_seg *s)
{
	uint64_t off = s->off + c->seg_got;
	size_t len = s->len - c->seg_got;
	ssize_t n;

	if (!c->no_splice && make_pipe(c) == 0) {
		n = splice_in(c, s, off, len);
		if (n != -EINVAL)
			return n;
		c->no_splice = true;	/* the socket side refused */
	}
	return bounce_in(c, s, off, len);
}

/* Into memory: the current and the following memory segments. */
static ssize_t
read_mem_segs(struct conn *c)
{
	struct iovec iov[MAX_IOV];
	int i, n = 0;

	for (i = c->seg; i < c->nseg && n < MAX_IOV; i++) {
		if (c->segs[i].fd >= 0)
			break;
		iov[n].iov_base = (char *)c->segs[i].addr +
				  (i == c->seg ? c->seg_got : 0);
		iov[n].iov_len = c->segs[i].len - (i == c->seg ? c->seg_got : 0);
		n++;
	}
	return result(readv(c->fd, iov, n));
}

static void
payload_advance(struct conn *c, size_t n)
{
	c->got += n;
	while (c->body == NULL && n > 0) {
		size_t take = c->segs[c->seg].len - c->seg_got;

		if (take > n)
			take = n;
		c->seg_got += take;
		n -= take;
		if (c->seg_got == c->segs[c->seg].len) {
			c->seg++;
			c->seg_got = 0;
		}
	}
}

/* Headers and small payloads are read ahead, IBUF_BYTES at a time: one
 * read takes the control frames that wait, not two per frame.  Large
 * payloads go straight to their memory or file. */
static bool
read_ahead(const struct conn *c)
{
	return !c->in_payload || c->f.len - c->got < IBUF_BYTES;
}

static ssize_t
fill_ibuf(struct conn *c)
{
	ssize_t n;

	if (c->ibuf == NULL && (c->ibuf = malloc(IBUF_BYTES)) == NULL)
		return -ENOMEM;
	n = result(read(c->fd, c->ibuf, IBUF_BYTES));
	c->ipos = 0;
	c->ilen = n > 0 ? (size_t)n : 0;
	if (n >= 0 && (size_t)n < IBUF_BYTES)
		c->drained = true;
	return n;
}

/* Payload bytes from the read-ahead into the current destination. */
static ssize_t
payload_from_ibuf(struct conn *c, const uint8_t *p, size_t take)
{
	const struct conn_seg *s;
	ssize_t n;

	if (c->body != NULL) {
		memcpy(c->body + c->got, p, take);
		return (ssize_t)take;
	}
	s = &c->segs[c->seg];
	if (take > s->len - c->seg_got)
		take = s->len - c->seg_got;
	if (s->fd < 0) {
		memcpy((char *)s->addr + c->seg_got, p, take);
		return (ssize_t)take;
	}
	n = pwrite(s->fd, p, take, (off_t)(s->off + c->seg_got));
	return n < 0 ? -errno : n == 0 ? -EIO : n;
}

/* Bytes of the frame in progress from the read-ahead. */
static ssize_t
from_ibuf(struct conn *c)
{
	const uint8_t *p = c->ibuf + c->ipos;
	size_t avail = c->ilen - c->ipos, take;
	ssize_t n;

	if (!c->in_payload) {
		take = PROTO_FRAME_LEN - c->hdr_got;
		take = take < avail ? take : avail;
		memcpy(c->hdr + c->hdr_got, p, take);
		c->ipos += take;
		return (ssize_t)take;
	}
	take = c->f.len - c->got < avail ? (size_t)(c->f.len - c->got) : avail;
	n = payload_from_ibuf(c, p, take);
	if (n > 0) {
		c->ipos += (size_t)n;
		payload_advance(c, (size_t)n);
	}
	return n;
}

/* One step of the frame in progress: bytes taken, 0 at the peer's end,
 * or -errno (-EAGAIN: nothing more for now). */
static ssize_t
read_some(struct conn *c)
{
	ssize_t n;

	if (c->ipos == c->ilen && read_ahead(c)) {
		n = fill_ibuf(c);
		if (n <= 0)
			return n;
	}
	if (c->ipos < c->ilen)
		return from_ibuf(c);
	if (c->body != NULL)
		n = result(read(c->fd, c->body + c->got,
				(size_t)(c->f.len - c->got)));
	else if (c->segs[c->seg].fd >= 0)
		n = read_file_seg(c, &c->segs[c->seg]);
	else
		n = read_mem_segs(c);
	if (n > 0)
		payload_advance(c, (size_t)n);
	return n;
}

/* The owner asked to hear when the payload is nearly in. */
static void
check_watch(struct conn *c)
{
	if (!c->watching || c->f.len - c->got > c->watch)
		return;
	c->watching = false;
	if (c->ops->on_payload_low != NULL)
		c->ops->on_payload_low(c->ctx, c);
}

/* The bytes just read complete a header or a frame: act on it. */
static int
after_read(struct conn *c, size_t n)
{
	int rc;

	if (!c->in_payload) {
		c->hdr_got += n;
		if (c->hdr_got < PROTO_FRAME_LEN)
			return 0;
		rc = header_done(c);
		if (rc == 0 && c->in_payload && !c->dead && !c->freed)
			check_watch(c);
		return rc;
	}
	check_watch(c);
	if (c->got == c->f.len && c->in_payload && !c->dead && !c->freed)
		frame_done(c);
	return 0;
}

/* A lingering connection throws away what comes, up to the peer's end. */
static void
drain(struct conn *c)
{
	char sink[16 << 10];
	ssize_t n;
	int i;

	for (i = 0; i < 64; i++) {
		n = read(c->fd, sink, sizeof(sink));
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		conn_close_handles(c);	/* the peer's end, or an error */
		return;
	}
}

static void
conn_read(struct conn *c)
{
	size_t budget = READ_BUDGET;
	ssize_t n;
	int rc;

	if (c->lingering) {
		c->ipos = c->ilen;
		drain(c);
		return;
	}
	c->drained = false;
	while (budget > 0 && !c->paused && !c->dead && !c->freed) {
		if (c->drained && c->ipos == c->ilen)
			return;	/* level-triggered: the poll says when more */
		n = read_some(c);
		if (n == -EAGAIN || n == -EINTR)
			return;
		c->last_rx = uv_now(c->loop);
		if (n <= 0) {
			conn_die(c, n < 0 ? (int)n
				 : (c->in_payload || c->hdr_got) ? -EPIPE : 0);
			return;
		}
		budget = (size_t)n < budget ? budget - (size_t)n : 0;
		rc = after_read(c, (size_t)n);
		if (rc < 0) {
			conn_die(c, rc);
			return;
		}
	}
}

/* ---------------------------------------------------------------------
 * Writing
 */

/* Files go out with sendfile from this size on; below, a copy is
 * cheaper than the call (where the bytes are in memory too). */
#define SENDFILE_MIN (16u << 10)

static bool
by_sendfile(const struct conn_seg *s)
{
	return s->fd >= 0 && (s->addr == NULL || s->len >= SENDFILE_MIN);
}

/* sendmsg of the header's rest and the memory segments that follow. */
static ssize_t
write_mem(struct conn *c, struct wreq *w)
{
	struct iovec iov[MAX_IOV + 1];
	struct msghdr mh = { .msg_iov = iov };
	int i, n = 0;

	if (w->hdr_done < PROTO_FRAME_LEN) {
		iov[n].iov_base = w->hdr + w->hdr_done;
		iov[n++].iov_len = PROTO_FRAME_LEN - w->hdr_done;
	}
	for (i = w->seg; i < w->nseg && n <= MAX_IOV; i++) {
		if (by_sendfile(&w->segs[i]))
			break;
		iov[n].iov_base = (char *)w->segs[i].addr +
				  (i == w->seg ? w->seg_done : 0);
		iov[n++].iov_len = w->segs[i].len -
				   (i == w->seg ? w->seg_done : 0);
	}
	mh.msg_iovlen = (size_t)n;
	return result(sendmsg(c->fd, &mh, MSG_NOSIGNAL |
			      (i < w->nseg ? MSG_MORE : 0)));
}

static ssize_t
write_file(struct conn *c, struct wreq *w)
{
	const struct conn_seg *s = &w->segs[w->seg];
	off_t off = (off_t)(s->off + w->seg_done);

	return result(sendfile(c->fd, s->fd, &off, s->len - w->seg_done));
}

static void
write_advance(struct wreq *w, size_t n)
{
	size_t take;

	take = PROTO_FRAME_LEN - w->hdr_done;
	take = take < n ? take : n;
	w->hdr_done += take;
	n -= take;
	while (n > 0) {
		take = w->segs[w->seg].len - w->seg_done;
		take = take < n ? take : n;
		w->seg_done += take;
		n -= take;
		if (w->seg_done == w->segs[w->seg].len) {
			w->seg++;
			w->seg_done = 0;
		}
	}
}

/* Frame w is written (or never will be): its on_sent is due, in order. */
static void
mark_done(struct conn *c, struct wreq *w)
{
	if (!w->notify) {	/* nobody waits for it */
		free(w);
		return;
	}
	w->next = NULL;
	if (c->done_tail != NULL)
		c->done_tail->next = w;
	else
		c->done = w;
	c->done_tail = w;
}

/* Write what the kernel takes; finished frames move to the done list.
 * Returns 0, or -errno (the connection is broken). */
static int
conn_flush(struct conn *c)
{
	struct wreq *w;
	ssize_t n;

	while ((w = c->whead) != NULL) {
		if (w->hdr_done == PROTO_FRAME_LEN && w->seg < w->nseg &&
		    by_sendfile(&w->segs[w->seg]))
			n = write_file(c, w);
		else
			n = write_mem(c, w);
		if (n == -EAGAIN || n == -EINTR)
			return 0;
		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;	/* a file shorter than its segment */
		write_advance(w, (size_t)n);
		if (w->hdr_done < PROTO_FRAME_LEN || w->seg < w->nseg)
			continue;
		c->whead = w->next;
		if (c->whead == NULL)
			c->wtail = NULL;
		mark_done(c, w);
	}
	if (c->shut && !c->shut_done) {
		c->shut_done = true;
		if (shutdown(c->fd, SHUT_WR) < 0)
			return -errno;
	}
	return 0;
}

/* Frames left unwritten when the connection breaks: reported failed. */
static void
fail_queued(struct conn *c, int status)
{
	struct wreq *w;

	while ((w = c->whead) != NULL) {
		c->whead = w->next;
		w->status = status;
		mark_done(c, w);
	}
	c->wtail = NULL;
}

/* The on_sent callbacks of finished frames; the owner may free us in
 * one, and then hears no more. */
static void
report_sent(struct conn *c)
{
	struct wreq *w;

	while ((w = c->done) != NULL) {
		c->done = w->next;
		if (c->done == NULL)
			c->done_tail = NULL;
		if (w->notify)
			c->owner_writes--;
		if (w->notify && !c->freed && c->ops->on_sent != NULL)
			c->ops->on_sent(c->ctx, c, w->cookie, w->status);
		free(w);
	}
}

static void
conn_write(struct conn *c)
{
	int rc = c->werr ? c->werr : conn_flush(c);

	if (rc < 0) {
		fail_queued(c, rc);
		report_sent(c);
		conn_die(c, rc);
		return;
	}
	report_sent(c);
}

static int
enqueue(struct conn *c, struct wreq *w)
{
	int rc;

	if (c->dead || c->closing || c->connecting || c->shut) {
		free(w);
		return c->connecting ? -ENOTCONN : -EPIPE;
	}
	note_tx(c);
	if (c->wtail != NULL)
		c->wtail->next = w;
	else
		c->whead = w;
	c->wtail = w;
	if (c->whead == w) {	/* try at once; on_sent comes from the loop */
		rc = conn_flush(c);
		if (rc < 0) {
			c->werr = rc;
			fail_queued(c, rc);
		}
	}
	conn_update(c);
	return 0;
}

int
conn_send_segs(struct conn *c, const struct frame *f,
	       const struct conn_seg *segs, int nseg, uint64_t cookie)
{
	struct wreq *w;
	int i, n = 0, rc;

	w = calloc(1, sizeof(*w) + (size_t)nseg * sizeof(*segs));
	if (w == NULL)
		return -ENOMEM;
	frame_encode(f, w->hdr);
	for (i = 0; i < nseg; i++)
		if (segs[i].len > 0)
			w->segs[n++] = segs[i];
	w->nseg = n;
	w->cookie = cookie;
	w->notify = true;
	c->owner_writes++;
	rc = enqueue(c, w);
	if (rc < 0)
		c->owner_writes--;
	return rc;
}

int
conn_send(struct conn *c, const struct frame *f, const struct iovec *iov,
	  int niov, uint64_t cookie)
{
	struct conn_seg *s = calloc(niov > 0 ? (size_t)niov : 1, sizeof(*s));
	int i, rc;

	if (s == NULL)
		return -ENOMEM;
	for (i = 0; i < niov; i++)
		s[i] = (struct conn_seg){ iov[i].iov_base, iov[i].iov_len, -1, 0 };
	rc = conn_send_segs(c, f, s, niov, cookie);
	free(s);
	return rc;
}

int
conn_send_copy(struct conn *c, const struct frame *f, const void *body)
{
	struct wreq *w;
	char *copy;

	w = calloc(1, sizeof(*w) + sizeof(w->segs[0]) + f->len);
	if (w == NULL)
		return -ENOMEM;
	copy = (char *)&w->segs[1];
	frame_encode(f, w->hdr);
	if (f->len > 0) {
		memcpy(copy, body, f->len);
		w->segs[0] = (struct conn_seg){ copy, f->len, -1, 0 };
		w->nseg = 1;
	}
	return enqueue(c, w);
}

/* ---------------------------------------------------------------------
 * Events
 */

static void
connect_done(struct conn *c, int status)
{
	c->connecting = false;
	uv_timer_stop(&c->timer);
	if (status == 0) {
		note_peer(c);
		conn_update(c);
	} else {
		c->dead = true;
		conn_update(c);
	}
	c->ops->on_connect(c->ctx, c, status);
}

/* The error pending on the socket, as -errno (-EIO if none is told). */
static int
socket_error(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	return err ? -err : -EIO;
}

static void
on_connecting(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	connect_done(c, -err);
}

static void
on_poll(uv_poll_t *h, int status, int events)
{
	struct conn *c = h->data;

	if (c->closing)
		return;
	if (c->connecting) {
		on_connecting(c);
		return;
	}
	if (status < 0 && !c->lingering) {	/* libuv says EBADF for any */
		conn_die(c, socket_error(c));	/* error on the socket */
		return;
	}
	if (events & (UV_WRITABLE | UV_DISCONNECT))
		conn_write(c);
	if (!c->closing && (events & (UV_READABLE | UV_DISCONNECT)))
		conn_read(c);
	if (!c->closing)
		conn_update(c);
}

static void
on_connect_timeout(uv_timer_t *t)
{
	struct conn *c = t->data;

	if (c->connecting && !c->freed)
		connect_done(c, -ETIMEDOUT);
}

/* ---------------------------------------------------------------------
 * Connecting, accepting, listening
 */

static int
tcp_socket(int family)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	return fd < 0 ? -errno : fd;
}

static socklen_t
sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

int
conn_connect(uv_loop_t *loop, const struct sockaddr *to,
	     const struct sockaddr *from, unsigned timeout_ms,
	     const struct conn_ops *ops, void *ctx, struct conn **out)
{
	struct conn *c;
	int fd, rc;

	*out = NULL;
	fd = tcp_socket(to->sa_family);
	if (fd < 0)
		return fd;
	if (from != NULL && bind(fd, from, sa_len(from)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (connect(fd, to, sa_len(to)) < 0 && errno != EINPROGRESS) {
		rc = -errno;
		close(fd);
		return rc;
	}
	rc = conn_init(loop, fd, ops, ctx, &c);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	net_format_sa(to, c->peer, sizeof(c->peer));
	c->connecting = true;
	conn_update(c);	/* writable once connected, or failed */
	if (timeout_ms > 0)
		uv_timer_start(&c->timer, on_connect_timeout, timeout_ms, 0);
	*out = c;
	return 0;
}

int
conn_adopt(uv_loop_t *loop, int fd, const struct conn_ops *ops, void *ctx,
	   struct conn **out)
{
	struct conn *c;
	int rc;

	*out = NULL;
	rc = conn_init(loop, fd, ops, ctx, &c);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	note_peer(c);
	conn_update(c);
	*out = c;
	return 0;
}

struct conn_listener {
	uv_poll_t poll;
	int fd;
	void (*on_accept)(void *ctx, int fd);
	void *ctx;
};

/* Accept what waits, a bounded number per wake-up. */
static void
on_listen(uv_poll_t *h, int status, int events)
{
	struct conn_listener *l = h->data;
	int i, fd;

	for (i = 0; i < 64; i++) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			l->on_accept(l->ctx, fd);
			continue;
		}
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			l->on_accept(l->ctx, -errno);
		return;
	}
}

int
conn_listen(uv_loop_t *loop, const struct sockaddr *addr, int backlog,
	    void (*on_accept)(void *ctx, int fd), void *ctx,
	    struct conn_listener **out)
{
	struct conn_listener *l;
	int one = 1, rc;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->fd = tcp_socket(addr->sa_family);
	if (l->fd < 0) {
		rc = l->fd;
		free(l);
		return rc;
	}
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	rc = bind(l->fd, addr, sa_len(addr)) < 0 || listen(l->fd, backlog) < 0
		     ? -errno : 0;
	if (rc == 0)
		rc = uv_poll_init_socket(loop, &l->poll, l->fd);
	if (rc < 0) {
		close(l->fd);
		free(l);
		return rc;
	}
	l->poll.data = l;
	l->on_accept = on_accept;
	l->ctx = ctx;
	uv_poll_start(&l->poll, UV_READABLE, on_listen);
	*out = l;
	return 0;
}

void
conn_listener_address(const struct conn_listener *l,
		      struct sockaddr_storage *out)
{
	socklen_t len = sizeof(*out);

	memset(out, 0, sizeof(*out));
	getsockname(l->fd, (struct sockaddr *)out, &len);
}

static void
on_listener_closed(uv_handle_t *h)
{
	struct conn_listener *l = h->data;

	close(l->fd);
	free(l);
}

void
conn_listener_close(struct conn_listener *l)
{
	if (l != NULL)
		uv_close((uv_handle_t *)&l->poll, on_listener_closed);
}

/* ---------------------------------------------------------------------
 * Reading on and off, the end, keepalive
 */

void
conn_watch_payload(struct conn *c, uint64_t left)
{
	c->watch = left;
	c->watching = true;
}

int
conn_set_unsent_limit(struct conn *c, unsigned bytes)
{
	int v = (int)bytes;

	return setsockopt(c->fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v,
			  sizeof(v)) < 0 ? -errno : 0;
}

void
conn_pause(struct conn *c)
{
	c->paused = true;
	conn_update(c);
}

void
conn_resume(struct conn *c)
{
	c->paused = false;
	if (c->ipos < c->ilen && !c->closing)
		uv_idle_start(&c->idle, on_idle);	/* read ahead */
	conn_update(c);
}

void
conn_shutdown(struct conn *c)
{
	int rc;

	if (c->shut || c->dead || c->closing || c->connecting)
		return;
	c->shut = true;
	if (c->whead == NULL) {	/* nothing queued: at once */
		rc = conn_flush(c);
		if (rc < 0 && c->lingering)
			conn_close_handles(c);
		else if (rc < 0)
			c->werr = rc;
	}
	conn_update(c);
}

/* Bytes that arrived and wait to be read: a process that could not run
 * for a while (starved, or just woken) finds its timers due before it has
 * read what came meanwhile; that peer was not silent. */
static bool
unread_input(struct conn *c)
{
	int n = 0;

	if (c->ipos < c->ilen)
		return true;
	return ioctl(c->fd, FIONREAD, &n) == 0 && n > 0;
}

static void
on_keepalive(uv_timer_t *t)
{
	struct conn *c = t->data;
	struct frame nop = { .type = MSG_NOP };
	uint64_t now = uv_now(t->loop);

	if (c->dead || c->closing)
		return;
	if (now - c->last_rx >= c->ka_timeout && unread_input(c))
		c->last_rx = now;
	if (now - c->last_rx >= c->ka_timeout) {
		log_debug("connection to %s silent for %u ms", c->peer,
			  c->ka_timeout);
		conn_die(c, -ETIMEDOUT);
		return;
	}
	if (now - c->last_tx >= c->ka_interval && !c->shut)
		conn_send_copy(c, &nop, NULL);
}

void
conn_keepalive(struct conn *c, unsigned interval_ms, unsigned timeout_ms)
{
	unsigned tick;

	if (c->dead || c->closing || c->connecting || timeout_ms == 0)
		return;
	/* a NOP at most a quarter of the timeout after our last frame:
	 * peers that run late (a loaded machine) are not taken for dead */
	c->ka_interval = interval_ms ? interval_ms : timeout_ms / 6;
	c->ka_timeout = timeout_ms;
	c->last_rx = c->last_tx = uv_now(c->loop);
	c->tx_gap = 0;
	tick = c->ka_interval / 2;
	uv_timer_start(&c->timer, on_keepalive, tick ? tick : 1,
		       tick ? tick : 1);
}

uint64_t
conn_longest_silence(struct conn *c)
{
	uv_update_time(c->loop);
	note_tx(c);	/* as if we sent now: the silence up to now counts */
	return c->tx_gap;
}

/* ---------------------------------------------------------------------
 * Accessors and release
 */

void
conn_set_owner(struct conn *c, const struct conn_ops *ops, void *ctx)
{
	c->ops = ops;
	c->ctx = ctx;
}

void
conn_set_body_limit(struct conn *c, uint64_t limit)
{
	c->body_limit = limit;
}

int
conn_local(const struct conn *c, struct sockaddr_storage *out)
{
	socklen_t len = sizeof(*out);

	memset(out, 0, sizeof(*out));
	return getsockname(c->fd, (struct sockaddr *)out, &len) < 0 ? -errno
								     : 0;
}

int
conn_remote(const struct conn *c, struct sockaddr_storage *out)
{
	socklen_t len = sizeof(*out);

	memset(out, 0, sizeof(*out));
	return getpeername(c->fd, (struct sockaddr *)out, &len) < 0 ? -errno
								     : 0;
}

const char *
conn_peer(const struct conn *c)
{
	return c->peer;
}

static void
on_linger_deadline(uv_timer_t *t)
{
	conn_close_handles(t->data);
}

void
conn_linger(struct conn *c, unsigned ms)
{
	if (c == NULL || c->freed)
		return;
	if (c->dead || c->closing || c->connecting || c->owner_writes > 0) {
		conn_free(c);
		return;
	}
	c->freed = true;
	c->lingering = true;
	c->paused = false;
	conn_shutdown(c);
	if (c->closing)
		return;
	conn_update(c);
	uv_timer_start(&c->timer, on_linger_deadline, ms, 0);
}

void
conn_free(struct conn *c)
{
	if (c == NULL || c->freed)
		return;
	c->freed = true;
	c->connecting = false;
	conn_close_handles(c);
	conn_release(c);
}
