/*
 * connio - a connection's bytes (conn_int.h): frames read into the
 * owner's memory or files (read-ahead for headers and small frames,
 * splice for payloads into files), and written with sendmsg and, from
 * files, sendfile.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "conn_int.h"
#include "log.h"

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

/* Payload bytes of frame w that may be written now. */
static uint64_t
wreq_allowed(const struct wreq *w)
{
	return w->ready - w->payload_done;
}

bool
wreq_waits(const struct wreq *w)
{
	return w->hdr_done == PROTO_FRAME_LEN && w->seg < w->nseg &&
	       wreq_allowed(w) == 0;
}

/* Append to iov[n..max) frame w's unwritten header and the memory
 * segments that follow it, as far as they are ready; returns the new
 * count, and whether the frame ends there (no segment left for sendfile,
 * none cut off). */
static int
gather(struct wreq *w, struct iovec *iov, int n, int max, bool *whole)
{
	uint64_t allow = wreq_allowed(w);
	size_t len;
	int i;

	*whole = false;
	if (w->hdr_done < PROTO_FRAME_LEN) {
		if (n == max)
			return n;
		iov[n].iov_base = w->hdr + w->hdr_done;
		iov[n++].iov_len = PROTO_FRAME_LEN - w->hdr_done;
	}
	for (i = w->seg; i < w->nseg; i++) {
		if (n == max || by_sendfile(&w->segs[i]) || allow == 0)
			return n;
		len = w->segs[i].len - (i == w->seg ? w->seg_done : 0);
		iov[n].iov_base = (char *)w->segs[i].addr +
				  (i == w->seg ? w->seg_done : 0);
		iov[n++].iov_len = len < allow ? len : (size_t)allow;
		if (len > allow)
			return n;
		allow -= len;
	}
	*whole = true;
	return n;
}

/* One sendmsg of frame w's header and memory segments and, while they
 * end whole, of the frames queued after it: the signals of one turn
 * leave in one segment (enqueue). */
static ssize_t
write_mem(struct conn *c, struct wreq *w)
{
	struct iovec iov[MAX_IOV + 1];
	struct msghdr mh = { .msg_iov = iov };
	bool whole;
	int n;

	n = gather(w, iov, 0, MAX_IOV + 1, &whole);
	while (whole && (w = w->next) != NULL && n < MAX_IOV + 1)
		n = gather(w, iov, n, MAX_IOV + 1, &whole);
	mh.msg_iovlen = (size_t)n;
	return result(sendmsg(c->fd, &mh, MSG_NOSIGNAL |
			      (whole ? 0 : MSG_MORE)));
}

static ssize_t
write_file(struct conn *c, struct wreq *w)
{
	const struct conn_seg *s = &w->segs[w->seg];
	off_t off = (off_t)(s->off + w->seg_done);
	size_t len = s->len - w->seg_done;

	if (len > wreq_allowed(w))
		len = (size_t)wreq_allowed(w);
	return result(sendfile(c->fd, s->fd, &off, len));
}

static void
write_advance(struct wreq *w, size_t n)
{
	size_t take;

	take = PROTO_FRAME_LEN - w->hdr_done;
	take = take < n ? take : n;
	w->hdr_done += take;
	n -= take;
	w->payload_done += n;
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

/* Payload bytes of frame w in all. */
static uint64_t
wreq_len(const struct wreq *w)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < w->nseg; i++)
		len += w->segs[i].len;
	return len;
}

/* Bytes of frame w not written yet. */
static size_t
wreq_left(const struct wreq *w)
{
	size_t left = PROTO_FRAME_LEN - w->hdr_done;
	int i;

	for (i = w->seg; i < w->nseg; i++)
		left += w->segs[i].len - (i == w->seg ? w->seg_done : 0);
	return left;
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

/* n bytes of the queue's frames went out: finished frames move to the
 * done list. */
static void
frames_advance(struct conn *c, size_t n)
{
	struct wreq *w;
	size_t take;

	while (n > 0 && (w = c->whead) != NULL) {
		take = wreq_left(w);
		take = take < n ? take : n;
		write_advance(w, take);
		n -= take;
		if (w->hdr_done < PROTO_FRAME_LEN || w->seg < w->nseg)
			return;
		c->whead = w->next;
		if (c->whead == NULL)
			c->wtail = NULL;
		mark_done(c, w);
	}
}

/* Write what the kernel takes; finished frames move to the done list.
 * Returns 0, or -errno (the connection is broken). */
int
conn_flush(struct conn *c)
{
	struct wreq *w;
	ssize_t n;

	while ((w = c->whead) != NULL && !wreq_waits(w)) {
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
		frames_advance(c, (size_t)n);
	}
	if (c->shut && !c->shut_done && c->whead == NULL) {
		c->shut_done = true;
		if (shutdown(c->fd, SHUT_WR) < 0)
			return -errno;
	}
	return 0;
}

/* Frames left unwritten when the connection breaks: reported failed. */
void
conn_fail_queued(struct conn *c, int status)
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
void
conn_report_sent(struct conn *c)
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

void
conn_write(struct conn *c)
{
	int rc = c->werr ? c->werr : conn_flush(c);

	if (rc < 0) {
		conn_fail_queued(c, rc);
		conn_report_sent(c);
		conn_die(c, rc);
		return;
	}
	conn_report_sent(c);
}

/* Link w into the queue: last, or with `pass` before the conn_send_segs
 * frames none of whose bytes are written yet (after every other frame;
 * the frames it passes keep their order). */
static void
link_wreq(struct conn *c, struct wreq *w, bool pass)
{
	struct wreq **at = c->wtail != NULL ? &c->wtail->next : &c->whead;
	struct wreq *q;

	if (pass)
		for (at = &c->whead, q = c->whead; q != NULL; q = q->next)
			if (!q->notify || q->hdr_done > 0)
				at = &q->next;
	w->next = *at;
	*at = w;
	if (w->next == NULL)
		c->wtail = w;
}

/* Write what the kernel takes now, outside the loop's write callback: a
 * failure breaks the connection, and the frames queued are reported
 * failed from the loop. */
static void
flush_now(struct conn *c)
{
	int rc = conn_flush(c);

	if (rc < 0) {
		c->werr = rc;
		conn_fail_queued(c, rc);
	}
}

/* Queue frame w (`pass`: see link_wreq).  Into an empty queue it is
 * written at once, unless it is `small`: then at the end of the loop's
 * turn (conn.c, on_idle), with the small frames queued after it, so that
 * signals to one peer in one turn go out in one segment and one system
 * call (a grant with the word that the last block is nearly in). */
static int
enqueue(struct conn *c, struct wreq *w, bool small, bool pass)
{
	bool was_empty = c->whead == NULL;

	if (c->dead || c->closing || c->connecting || c->shut) {
		free(w);
		return c->connecting ? -ENOTCONN : -EPIPE;
	}
	conn_note_tx(c);
	link_wreq(c, w, pass);
	if (was_empty && small)
		c->flush_due = true;
	if (was_empty && !small)	/* on_sent comes from the loop */
		flush_now(c);
	conn_update(c);
	return 0;
}

/* A frame of f->len payload bytes in segs, `ready` of them ready. */
static struct wreq *
segs_wreq(const struct frame *f, const struct conn_seg *segs, int nseg,
	  uint64_t cookie, uint64_t ready)
{
	struct wreq *w;
	int i, n = 0;

	w = calloc(1, sizeof(*w) + (size_t)nseg * sizeof(*segs));
	if (w == NULL)
		return NULL;
	frame_encode(f, w->hdr);
	for (i = 0; i < nseg; i++)
		if (segs[i].len > 0)
			w->segs[n++] = segs[i];
	w->nseg = n;
	w->cookie = cookie;
	w->notify = true;
	w->ready = ready < f->len ? ready : f->len;
	return w;
}

/* Queue w, a frame whose on_sent is due (NULL: out of memory). */
static int
send_wreq(struct conn *c, struct wreq *w)
{
	int rc;

	if (w == NULL)
		return -ENOMEM;
	c->owner_writes++;
	rc = enqueue(c, w, false, false);
	if (rc < 0)
		c->owner_writes--;
	return rc;
}

int
conn_send_segs(struct conn *c, const struct frame *f,
	       const struct conn_seg *segs, int nseg, uint64_t cookie)
{
	return send_wreq(c, segs_wreq(f, segs, nseg, cookie, f->len));
}

int
conn_send_growing(struct conn *c, const struct frame *f,
		  const struct conn_seg *segs, int nseg, uint64_t cookie,
		  uint64_t ready)
{
	return send_wreq(c, segs_wreq(f, segs, nseg, cookie, ready));
}

int
conn_grow(struct conn *c, uint64_t cookie, uint64_t ready)
{
	struct wreq *w;

	for (w = c->whead; w != NULL; w = w->next)
		if (w->notify && w->cookie == cookie)
			break;
	if (w == NULL || c->dead || c->closing || c->werr)
		return w == NULL ? -ENOENT : -EPIPE;
	if (ready <= w->ready)
		return 0;
	w->ready = ready < wreq_len(w) ? ready : wreq_len(w);
	if (w == c->whead && !c->flush_due)
		flush_now(c);
	conn_update(c);
	return 0;
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

/* A frame with a copy of f->len bytes of body, or NULL. */
static struct wreq *
copy_wreq(const struct frame *f, const void *body)
{
	struct wreq *w;
	char *copy;

	w = calloc(1, sizeof(*w) + sizeof(w->segs[0]) + f->len);
	if (w == NULL)
		return NULL;
	copy = (char *)&w->segs[1];
	frame_encode(f, w->hdr);
	w->ready = f->len;
	if (f->len > 0) {
		memcpy(copy, body, f->len);
		w->segs[0] = (struct conn_seg){ copy, f->len, -1, 0 };
		w->nseg = 1;
	}
	return w;
}

int
conn_send_copy(struct conn *c, const struct frame *f, const void *body)
{
	struct wreq *w = copy_wreq(f, body);

	return w == NULL ? -ENOMEM : enqueue(c, w, true, false);
}

int
conn_send_signal(struct conn *c, const struct frame *f)
{
	struct wreq *w = copy_wreq(f, NULL);

	return w == NULL ? -ENOMEM : enqueue(c, w, true, true);
}
