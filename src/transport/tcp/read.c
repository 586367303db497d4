/* SPDX-License-Identifier: MIT */
/*
 * read - a connection's incoming bytes (conn_int.h): frames read into
 * the owner's memory or files (read-ahead for headers and small frames,
 * splice for payloads into files).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/tcp/conn_int.h"
#include "util/log.h"

/* Our buffer for a payload starts at this size at most (body_room). */
#define BODY_FIRST (64u << 10)

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
	c->body_cap = c->f.len < BODY_FIRST ? c->f.len : BODY_FIRST;
	c->body = malloc(c->body_cap);
	return c->body != NULL ? 0 : -ENOMEM;
}

/* Room in our buffer for more of the payload: it doubles when full, up to
 * the payload's length.  Bytes that may be taken now, or -ENOMEM. */
static ssize_t
body_room(struct conn *c)
{
	uint64_t cap = c->body_cap;
	uint8_t *grown;

	if (c->got == cap) {
		cap = cap * 2 < c->f.len ? cap * 2 : c->f.len;
		grown = realloc(c->body, cap);
		if (grown == NULL)
			return -ENOMEM;
		c->body = grown;
		c->body_cap = cap;
	}
	return (ssize_t)(c->body_cap - c->got);
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
	n = conn_result(splice(c->fd, NULL, c->pipe[1], NULL, len,
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
	n = conn_result(read(c->fd, c->bounce, len < BOUNCE_BYTES ? len
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
	return conn_result(readv(c->fd, iov, n));
}

static void
payload_advance(struct conn *c, size_t n)
{
	c->got += n;
	if (c->body == NULL)
		conn_segs_advance(c->segs, &c->seg, &c->seg_got, n);
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
	n = conn_result(read(c->fd, c->ibuf, IBUF_BYTES));
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
		n = body_room(c);
		if (n < 0)
			return n;
		take = (size_t)n < take ? (size_t)n : take;
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
	if (c->body != NULL) {
		n = body_room(c);
		if (n > 0)
			n = conn_result(read(c->fd, c->body + c->got,
					     (size_t)n));
	}
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
	if (c->ops->on_payload != NULL && c->body == NULL && !c->dead &&
	    !c->freed)
		c->ops->on_payload(c->ctx, c, c->got);
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

void
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
