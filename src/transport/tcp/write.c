/* SPDX-License-Identifier: MIT */
/*
 * write - a connection's outgoing bytes (conn_int.h): frames written
 * with sendmsg and, from files, sendfile; frames that grow as a block
 * lands; signals that pass the blocks queued before them.
 */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/tcp/conn_int.h"
#include "util/log.h"

/* Files go out with sendfile from this size on; below, a copy is
 * cheaper than the call (where the bytes are in memory too). */
#define SENDFILE_MIN (16u << 10)

/* A block passed on as it lands leaves in whole segments (cut_write_len):
 * sendfile moves a file through the kernel's splice pipe, this many
 * pages a round (PIPE_DEF_BUFFERS), and pushes each round's end; segment
 * sizes above WHOLE_SEG_MAX (loopback's are 32 KiB and more) are not worth
 * rounding to. */
#define SPLICE_ROUND_PAGES 16u
#define WHOLE_SEG_MAX 8192

static size_t wreq_left(const struct wreq *w);

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
conn_wreq_waits(const struct wreq *w)
{
	return w->hdr_done == PROTO_FRAME_LEN && w->seg < w->nseg &&
	       (wreq_allowed(w) == 0 || w->held_at == w->ready);
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
	return conn_result(sendmsg(c->fd, &mh, MSG_NOSIGNAL |
			      (whole ? 0 : MSG_MORE)));
}

/* The connection's segment size (TCP_MAXSEG), asked once; -1 when
 * unknown or above WHOLE_SEG_MAX. */
static int
conn_mss(struct conn *c)
{
	socklen_t sl = sizeof(c->mss);

	if (c->mss == 0 &&
	    (getsockopt(c->fd, IPPROTO_TCP, TCP_MAXSEG, &c->mss, &sl) < 0 ||
	     c->mss <= 0 || c->mss > WHOLE_SEG_MAX))
		c->mss = -1;
	return c->mss;
}

/* Of `len` landed bytes of a frame that still grows, at file offset off,
 * how many to write now (0: none yet).  At most one splice round, and as
 * many as end the socket's unsent bytes on a segment boundary: under
 * TCP_NODELAY the push at the end of each round, and each ACK that comes
 * back meanwhile, send an unsent tail short, and a relay that passed on
 * whatever had landed sent many short segments, headers on the link that
 * bounds a chain (docs/performance.md, its constants).  The rest waits
 * for more to land, or for the frame's end. */
static size_t
cut_write_len(struct conn *c, off_t off, size_t len)
{
	static size_t page;
	size_t round, total;
	int mss = conn_mss(c), unsent;

	if (page == 0)
		page = (size_t)sysconf(_SC_PAGESIZE);
	if (mss < 0 || ioctl(c->fd, SIOCOUTQNSD, &unsent) < 0 || unsent < 0)
		return len;
	round = SPLICE_ROUND_PAGES * page - (size_t)off % page;
	total = (size_t)unsent + (len < round ? len : round);
	total -= total % (size_t)mss;
	return total > (size_t)unsent ? total - (size_t)unsent : 0;
}

static ssize_t
write_file(struct conn *c, struct wreq *w)
{
	const struct conn_seg *s = &w->segs[w->seg];
	off_t off = (off_t)(s->off + w->seg_done);
	size_t len = s->len - w->seg_done;
	uint64_t allowed = wreq_allowed(w);

	if (len >= allowed && allowed < wreq_left(w)) {
		/* what has landed ends in this segment, and the frame grows */
		len = cut_write_len(c, off, (size_t)allowed);
		if (len == 0) {
			w->held_at = w->ready;
			return -EAGAIN;
		}
	}
	return conn_result(sendfile(c->fd, s->fd, &off, len));
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
	conn_segs_advance(w->segs, &w->seg, &w->seg_done, n);
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

	while ((w = c->whead) != NULL && !conn_wreq_waits(w)) {
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

/* A frame with room for `room` bytes of body after its one segment, or
 * NULL. */
static struct wreq *
alloc_wreq(const struct frame *f, size_t room)
{
	struct wreq *w = calloc(1, sizeof(*w) + sizeof(w->segs[0]) + room);

	if (w != NULL)
		frame_encode(f, w->hdr);
	return w;
}

/* A frame with a copy of f->len bytes of body, or NULL. */
static struct wreq *
copy_wreq(const struct frame *f, const void *body)
{
	struct wreq *w = alloc_wreq(f, f->len);
	char *copy;

	if (w == NULL || f->len == 0)
		return w;
	copy = (char *)&w->segs[1];
	memcpy(copy, body, f->len);
	w->segs[0] = (struct conn_seg){ copy, f->len, -1, 0 };
	w->nseg = 1;
	w->ready = f->len;
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
	struct wreq *w;

	if (f->len != 0)	/* a signal carries no body */
		return -EINVAL;
	w = alloc_wreq(f, 0);
	return w == NULL ? -ENOMEM : enqueue(c, w, true, true);
}
