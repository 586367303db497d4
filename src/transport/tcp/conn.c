/* SPDX-License-Identifier: MIT */
/*
 * conn - framed TCP connection on libuv (see conn.h): its life cycle,
 * events, connecting and listening, keepalive; the bytes themselves move
 * in read.c (in) and write.c (out).
 *
 * The socket is ours (non-blocking), watched with a uv_poll: libuv's own
 * streams can only move bytes through memory, and a block that lives in a
 * file should go out with sendfile(2) and come in with splice(2).
 */
#include "transport/tcp/conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "transport/tcp/conn_int.h"
#include "util/log.h"
#include "util/net.h"

static void on_poll(uv_poll_t *h, int status, int events);

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
void
conn_close_handles(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->timer, on_handle_closed);
	uv_close((uv_handle_t *)&c->idle, on_handle_closed);
	uv_close((uv_handle_t *)&c->deadline, on_handle_closed);
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
void
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
	uv_timer_stop(&c->deadline);
	conn_update(c);
	if (c->ops->on_close != NULL)
		c->ops->on_close(c->ctx, c, status);
	conn_fail_queued(c, status < 0 ? status : -EPIPE);
	conn_report_sent(c);
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
	uv_timer_init(loop, &c->deadline);
	c->poll.data = c->timer.data = c->idle.data = c->deadline.data = c;
	c->handles = 4;
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
	if (c->flush_due) {
		c->flush_due = false;
		if (!c->dead && !c->closing)
			conn_write(c);	/* reports what is done, too */
		if (c->closing)
			return;
	}
	conn_report_sent(c);
	if (!c->closing && !c->paused && c->ipos < c->ilen)
		conn_read(c);	/* read ahead while paused */
	if (!c->closing)
		conn_update(c);
}

/* What the poll should watch now.  Finished frames are reported, and
 * small frames of the turn written (flush_due), from an idle callback:
 * toggling the poll for them would cost two epoll_ctl calls per frame. */
void
conn_update(struct conn *c)
{
	int ev = 0;

	if (c->closing)
		return;
	if (c->done != NULL || c->flush_due)
		uv_idle_start(&c->idle, on_idle);
	if (c->connecting ||
	    (c->whead != NULL && !c->flush_due && !conn_wreq_waits(c->whead)) ||
	    (c->shut && !c->shut_done && c->whead == NULL))
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
void
conn_note_tx(struct conn *c)
{
	uint64_t now = uv_now(c->loop);

	if (now - c->last_tx > c->tx_gap)
		c->tx_gap = now - c->last_tx;
	c->last_tx = now;
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

/* The error pending on the socket, as -errno; -ECONNRESET if none is told
 * (a reset already taken by a read): a broken connection, never -EIO,
 * which the engine takes for an error of our own files. */
static int
socket_error(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	return err ? -err : -ECONNRESET;
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
	if (status < 0 && c->lingering) {	/* libuv stopped the poll: */
		conn_close_handles(c);	/* no end of the peer's to wait for */
		return;
	}
	if (status < 0) {	/* libuv says EBADF for any */
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
	bool due;
	int rc;

	if (c->shut || c->dead || c->closing || c->connecting)
		return;
	c->shut = true;
	due = c->flush_due;	/* the turn's last frames go now, then the end */
	c->flush_due = false;
	if (c->whead == NULL || due) {	/* nothing blocked: at once */
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

unsigned
conn_keepalive_timeout(const struct conn *c)
{
	return c != NULL ? c->ka_timeout : 0;
}

void
conn_keepalive_tune(struct conn *c, unsigned interval_ms, unsigned timeout_ms)
{
	unsigned tick;

	if (c == NULL || c->dead || c->closing || c->ka_timeout == 0 ||
	    timeout_ms == 0)
		return;
	c->ka_interval = interval_ms ? interval_ms : timeout_ms / 6;
	c->ka_timeout = timeout_ms;
	tick = c->ka_interval / 2;
	uv_timer_start(&c->timer, on_keepalive, tick ? tick : 1,
		       tick ? tick : 1);
}

static void
on_deadline(uv_timer_t *t)
{
	struct conn *c = t->data;

	if (c->dead || c->closing)
		return;
	log_debug("connection to %s: its deadline passed", c->peer);
	conn_die(c, -ETIME);
}

void
conn_set_deadline(struct conn *c, unsigned ms)
{
	if (c->dead || c->closing)
		return;
	if (ms == 0)
		uv_timer_stop(&c->deadline);
	else
		uv_timer_start(&c->deadline, on_deadline, ms, 0);
}

uint64_t
conn_longest_silence(struct conn *c)
{
	if (c->ka_timeout == 0)
		return 0;	/* no keepalive: nothing measured */
	uv_update_time(c->loop);
	conn_note_tx(c);	/* as if we sent now: the silence up to now counts */
	return c->tx_gap;
}

bool
conn_lease_lost(struct conn *c, unsigned timeout_ms, uint64_t *silence)
{
	*silence = conn_longest_silence(c);
	return *silence >= (uint64_t)timeout_ms * 7 / 8;
}

bool
conn_all_acked(const struct conn *c)
{
	int unacked = 0;

	if (c == NULL)
		return true;
	if (c->whead != NULL)
		return false;
	if (ioctl(c->fd, SIOCOUTQ, &unacked) < 0)
		return true;	/* not a socket that says: as before */
	return unacked == 0;
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
	if (c->flush_due && !c->dead && !c->closing)
		conn_flush(c);	/* small frames of this turn: as if at once */
	conn_close_handles(c);
	conn_release(c);
}

void
conn_segs_advance(const struct conn_seg *segs, int *seg, size_t *done,
		  size_t n)
{
	size_t take;

	while (n > 0) {
		take = segs[*seg].len - *done;
		take = take < n ? take : n;
		*done += take;
		n -= take;
		if (*done == segs[*seg].len) {
			(*seg)++;
			*done = 0;
		}
	}
}
