/*
 * conn - framed TCP connection on libuv (see conn.h).
 */
#include "conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "log.h"
#include "net.h"

#define CONN_DEFAULT_BODY_LIMIT (64u << 10)

struct conn {
	uv_tcp_t tcp;
	uv_timer_t timer;	/* connect timeout, then keepalive */
	uv_connect_t creq;
	uv_shutdown_t sreq;
	const struct conn_ops *ops;
	void *ctx;
	char peer[NET_ADDRSTRLEN];

	/* reading */
	uint8_t hdr[PROTO_FRAME_LEN];
	size_t hdr_got;
	struct frame f;
	bool in_payload;
	uint64_t got;		/* payload bytes read */
	struct iovec *iov;	/* owner memory for the payload */
	int niov, iov_cap, iov_idx;
	size_t iov_off;
	uint8_t *body;		/* or our own buffer */
	uint64_t body_limit;

	uint64_t last_rx, last_tx;	/* loop time of last activity */
	uint64_t tx_gap;	/* longest silence of ours, since keepalive */
	unsigned ka_interval, ka_timeout;

	int handles;		/* open libuv handles */
	bool connecting;
	bool reading;
	bool paused;
	bool dead;		/* on_close reported */
	bool closing;		/* handles are closing */
	bool freed;		/* the owner let go */
	bool shut;
	bool lingering;		/* conn_linger: reading to the peer's end */
	unsigned owner_writes;	/* conn_send frames not yet written */
};

/* Where a lingering connection's input goes (one loop per process, and
 * the bytes are thrown away). */
static char linger_sink[64 << 10];

struct wreq {
	uv_write_t req;
	struct conn *c;
	uint64_t cookie;
	bool notify;
	uint8_t hdr[PROTO_FRAME_LEN];
	uv_buf_t bufs[];
};

static void conn_start_reading(struct conn *c);

/* We send now: the silence before counts towards the longest. */
static void
note_tx(struct conn *c)
{
	uint64_t now = uv_now(c->tcp.loop);

	if (now - c->last_tx > c->tx_gap)
		c->tx_gap = now - c->last_tx;
	c->last_tx = now;
}

/* Memory goes once the owner let go and libuv is done with the handles. */
static void
conn_release(struct conn *c)
{
	if (c->handles > 0 || !c->freed)
		return;
	free(c->iov);
	free(c->body);
	free(c);
}

static void
on_handle_closed(uv_handle_t *h)
{
	struct conn *c = h->data;

	c->handles--;
	conn_release(c);
}

static void
conn_close_handles(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->timer, on_handle_closed);
	uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
}

/* The connection ended; tell the owner once, unless it already let go. */
static void
conn_die(struct conn *c, int status)
{
	if (c->dead || c->freed)
		return;
	c->dead = true;
	if (c->reading)
		uv_read_stop((uv_stream_t *)&c->tcp);
	c->reading = false;
	uv_timer_stop(&c->timer);
	if (c->ops->on_close != NULL)
		c->ops->on_close(c->ctx, c, status);
}

static int
conn_init(uv_loop_t *loop, const struct conn_ops *ops, void *ctx,
	  struct conn **out)
{
	struct conn *c;
	int rc;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	rc = uv_tcp_init(loop, &c->tcp);
	if (rc < 0) {
		free(c);
		return rc;
	}
	uv_timer_init(loop, &c->timer);
	c->tcp.data = c->timer.data = c;
	c->handles = 2;
	c->ops = ops;
	c->ctx = ctx;
	c->body_limit = CONN_DEFAULT_BODY_LIMIT;
	strcpy(c->peer, "?");
	*out = c;
	return 0;
}

static void
conn_note_peer(struct conn *c)
{
	struct sockaddr_storage ss;
	int len = sizeof(ss);

	if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0)
		net_format(&ss, c->peer, sizeof(c->peer));
	uv_tcp_nodelay(&c->tcp, 1);
}

/* ---------------------------------------------------------------------
 * Reading
 */

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct conn *c = h->data;

	(void)suggested;
	if (c->lingering) {
		buf->base = linger_sink;
		buf->len = sizeof(linger_sink);
	} else if (!c->in_payload) {
		buf->base = (char *)c->hdr + c->hdr_got;
		buf->len = PROTO_FRAME_LEN - c->hdr_got;
	} else if (c->body != NULL) {
		buf->base = (char *)c->body + c->got;
		buf->len = c->f.len - c->got;
	} else {
		buf->base = (char *)c->iov[c->iov_idx].iov_base + c->iov_off;
		buf->len = c->iov[c->iov_idx].iov_len - c->iov_off;
	}
}

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
	rc = c->ops->on_frame(c->ctx, c, &f, body);
	free(body);
	if (rc < 0)
		conn_die(c, rc);
}

/* Copy the owner's iovec list, dropping empty entries. */
static int
conn_take_iov(struct conn *c, const struct iovec *iov, int niov)
{
	uint64_t sum = 0;
	int i;

	if (niov > c->iov_cap) {
		struct iovec *p = realloc(c->iov, (size_t)niov * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		c->iov = p;
		c->iov_cap = niov;
	}
	c->niov = 0;
	for (i = 0; i < niov; i++) {
		if (iov[i].iov_len == 0)
			continue;
		c->iov[c->niov++] = iov[i];
		sum += iov[i].iov_len;
	}
	c->iov_idx = 0;
	c->iov_off = 0;
	return sum == c->f.len ? 0 : -EINVAL;
}

static int
header_done(struct conn *c)
{
	const struct iovec *iov = NULL;
	int niov = 0, rc;

	rc = frame_decode(c->hdr, &c->f);
	if (rc < 0)
		return rc;
	if (c->f.type == MSG_NOP) {
		c->hdr_got = 0;
		return c->f.len == 0 ? 0 : -EPROTO;
	}
	rc = c->ops->on_header(c->ctx, c, &c->f, &iov, &niov);
	if (rc < 0 || c->dead || c->freed)
		return rc;
	if (c->f.len == 0) {
		frame_done(c);
		return 0;
	}
	c->in_payload = true;
	c->got = 0;
	if (niov > 0)
		return conn_take_iov(c, iov, niov);
	if (c->f.len > c->body_limit)
		return -EMSGSIZE;
	c->body = malloc(c->f.len);
	return c->body != NULL ? 0 : -ENOMEM;
}

static void
payload_advance(struct conn *c, size_t n)
{
	c->got += n;
	if (c->body != NULL)
		return;
	c->iov_off += n;
	if (c->iov_off == c->iov[c->iov_idx].iov_len) {
		c->iov_idx++;
		c->iov_off = 0;
	}
}

static void
on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct conn *c = s->data;
	int rc;

	(void)buf;
	if (c->lingering) {
		if (nread < 0)	/* the peer's end, or an error: done */
			conn_close_handles(c);
		return;
	}
	if (nread == 0 || c->dead || c->freed)
		return;
	c->last_rx = uv_now(c->tcp.loop);
	if (nread < 0) {
		if (nread == UV_EOF)
			rc = (c->in_payload || c->hdr_got) ? -EPIPE : 0;
		else
			rc = (int)nread;
		conn_die(c, rc);
		return;
	}
	if (!c->in_payload) {
		c->hdr_got += (size_t)nread;
		if (c->hdr_got == PROTO_FRAME_LEN) {
			rc = header_done(c);
			if (rc < 0)
				conn_die(c, rc);
		}
		return;
	}
	payload_advance(c, (size_t)nread);
	if (c->got == c->f.len)
		frame_done(c);
}

static void
conn_start_reading(struct conn *c)
{
	if (c->reading || c->paused || c->dead || c->closing)
		return;
	if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0)
		c->reading = true;
}

void
conn_pause(struct conn *c)
{
	c->paused = true;
	if (c->reading)
		uv_read_stop((uv_stream_t *)&c->tcp);
	c->reading = false;
}

void
conn_resume(struct conn *c)
{
	c->paused = false;
	if (!c->connecting)
		conn_start_reading(c);
}

/* ---------------------------------------------------------------------
 * Connecting and accepting
 */

static void
on_connect_timeout(uv_timer_t *t)
{
	struct conn *c = t->data;

	if (!c->connecting)
		return;
	c->connecting = false;
	c->dead = true;
	conn_close_handles(c);
	c->ops->on_connect(c->ctx, c, -ETIMEDOUT);
}

static void
on_connected(uv_connect_t *req, int status)
{
	struct conn *c = req->data;

	if (!c->connecting || c->freed)
		return;
	c->connecting = false;
	uv_timer_stop(&c->timer);
	if (status < 0) {
		c->dead = true;
		c->ops->on_connect(c->ctx, c, status);
		return;
	}
	conn_note_peer(c);
	conn_start_reading(c);
	c->ops->on_connect(c->ctx, c, 0);
}

int
conn_connect(uv_loop_t *loop, const struct sockaddr *to,
	     const struct sockaddr *from, unsigned timeout_ms,
	     const struct conn_ops *ops, void *ctx, struct conn **out)
{
	struct conn *c;
	int rc;

	*out = NULL;
	rc = conn_init(loop, ops, ctx, &c);
	if (rc < 0)
		return rc;
	net_format_sa(to, c->peer, sizeof(c->peer));
	if (from != NULL) {
		rc = uv_tcp_bind(&c->tcp, from, 0);
		if (rc < 0)
			goto fail;
	}
	c->creq.data = c;
	rc = uv_tcp_connect(&c->creq, &c->tcp, to, on_connected);
	if (rc < 0)
		goto fail;
	c->connecting = true;
	if (timeout_ms > 0)
		uv_timer_start(&c->timer, on_connect_timeout, timeout_ms, 0);
	*out = c;
	return 0;
fail:
	c->freed = true;
	conn_close_handles(c);
	return rc;
}

int
conn_accept(uv_stream_t *server, const struct conn_ops *ops, void *ctx,
	    struct conn **out)
{
	struct conn *c;
	int rc;

	*out = NULL;
	rc = conn_init(server->loop, ops, ctx, &c);
	if (rc < 0)
		return rc;
	rc = uv_accept(server, (uv_stream_t *)&c->tcp);
	if (rc < 0) {
		c->freed = true;
		conn_close_handles(c);
		return rc;
	}
	conn_note_peer(c);
	conn_start_reading(c);
	*out = c;
	return 0;
}

/* ---------------------------------------------------------------------
 * Writing
 */

static void
on_written(uv_write_t *req, int status)
{
	struct wreq *w = req->data;
	struct conn *c = w->c;

	if (w->notify)
		c->owner_writes--;
	if (w->notify && !c->freed && c->ops->on_sent != NULL)
		c->ops->on_sent(c->ctx, c, w->cookie, status);
	free(w);
	if (status < 0 && status != UV_ECANCELED && c->lingering)
		conn_close_handles(c);
	else if (status < 0 && status != UV_ECANCELED)
		conn_die(c, status);
}

static int
conn_write(struct conn *c, struct wreq *w, int nbufs)
{
	int rc;

	if (c->dead || c->closing || c->connecting) {
		free(w);
		return c->connecting ? -ENOTCONN : -EPIPE;
	}
	w->c = c;
	w->req.data = w;
	note_tx(c);
	rc = uv_write(&w->req, (uv_stream_t *)&c->tcp, w->bufs,
		      (unsigned)nbufs, on_written);
	if (rc < 0)
		free(w);
	return rc;
}

int
conn_send(struct conn *c, const struct frame *f, const struct iovec *iov,
	  int niov, uint64_t cookie)
{
	struct wreq *w;
	int i, n = 1, rc;

	w = malloc(sizeof(*w) + (size_t)(niov + 1) * sizeof(uv_buf_t));
	if (w == NULL)
		return -ENOMEM;
	frame_encode(f, w->hdr);
	w->bufs[0] = uv_buf_init((char *)w->hdr, PROTO_FRAME_LEN);
	for (i = 0; i < niov; i++)
		if (iov[i].iov_len > 0)
			w->bufs[n++] = uv_buf_init(iov[i].iov_base,
						   (unsigned)iov[i].iov_len);
	w->cookie = cookie;
	w->notify = true;
	c->owner_writes++;
	rc = conn_write(c, w, n);
	if (rc < 0)
		c->owner_writes--;
	return rc;
}

int
conn_send_copy(struct conn *c, const struct frame *f, const void *body)
{
	struct wreq *w;
	char *copy;

	w = malloc(sizeof(*w) + 2 * sizeof(uv_buf_t) + f->len);
	if (w == NULL)
		return -ENOMEM;
	copy = (char *)&w->bufs[2];
	frame_encode(f, w->hdr);
	w->bufs[0] = uv_buf_init((char *)w->hdr, PROTO_FRAME_LEN);
	if (f->len > 0)
		memcpy(copy, body, f->len);
	w->bufs[1] = uv_buf_init(copy, (unsigned)f->len);
	w->notify = false;
	return conn_write(c, w, f->len > 0 ? 2 : 1);
}

static void
on_shutdown(uv_shutdown_t *req, int status)
{
	struct conn *c = req->data;

	if (status < 0 && status != UV_ECANCELED && c->lingering)
		conn_close_handles(c);
	else if (status < 0 && status != UV_ECANCELED)
		conn_die(c, status);
}

void
conn_shutdown(struct conn *c)
{
	if (c->shut || c->dead || c->closing || c->connecting)
		return;
	c->shut = true;
	c->sreq.data = c;
	if (uv_shutdown(&c->sreq, (uv_stream_t *)&c->tcp, on_shutdown) == 0)
		return;
	if (c->lingering)
		conn_close_handles(c);
	else
		conn_die(c, -EPIPE);
}

/* Bytes that arrived and wait to be read: a process that could not run
 * for a while (starved, or just woken) finds its timers due before it has
 * read what came meanwhile; that peer was not silent. */
static bool
unread_input(struct conn *c)
{
	uv_os_fd_t fd;
	int n = 0;

	return uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0 &&
	       ioctl(fd, FIONREAD, &n) == 0 && n > 0;
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
	c->last_rx = c->last_tx = uv_now(c->tcp.loop);
	c->tx_gap = 0;
	tick = c->ka_interval / 2;
	uv_timer_start(&c->timer, on_keepalive, tick ? tick : 1,
		       tick ? tick : 1);
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

uint64_t
conn_longest_silence(struct conn *c)
{
	uv_update_time(c->tcp.loop);
	note_tx(c);	/* as if we sent now: the silence up to now counts */
	return c->tx_gap;
}

size_t
conn_write_queue(const struct conn *c)
{
	return uv_stream_get_write_queue_size((const uv_stream_t *)&c->tcp);
}

int
conn_local(const struct conn *c, struct sockaddr_storage *out)
{
	int len = sizeof(*out);

	memset(out, 0, sizeof(*out));
	return uv_tcp_getsockname(&c->tcp, (struct sockaddr *)out, &len);
}

int
conn_remote(const struct conn *c, struct sockaddr_storage *out)
{
	int len = sizeof(*out);

	memset(out, 0, sizeof(*out));
	return uv_tcp_getpeername(&c->tcp, (struct sockaddr *)out, &len);
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
	conn_start_reading(c);
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
