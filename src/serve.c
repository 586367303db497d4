/*
 * serve - the receiving daemon (see serve.h).
 */
#include "serve.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "conn.h"
#include "engine.h"
#include "net.h"
#include "path.h"
#include "proto.h"
#include "store.h"
#include "xtcp.h"

enum jstate {
	JS_SETUP,	/* creating files in the thread pool */
	JS_READY,	/* ACCEPT sent, waiting for START */
	JS_RUNNING,
	JS_ENDED,	/* resources released, flushing the control stream */
};

/* A connection whose first frame has not arrived yet. */
struct fresh {
	struct serve *s;
	struct conn *c;
	bool refused;	/* a bad JOB was answered; waiting for the close */
	struct fresh *prev, *next;
};

/* A data connection that came before its job's START. */
struct parked {
	struct sjob *j;
	struct conn *c;
	uint32_t from, to;
	struct parked *next;
};

struct sjob {
	struct serve *s;
	struct sjob *prev, *next;
	char tag[16];
	struct conn *ctl;
	struct job *job;
	struct store *st;
	struct eng *eng;
	struct roster *ro;
	enum jstate state;
	bool complete, landed, eng_done, crc_known;
	uint32_t crc_expected;
	uv_work_t work;
	bool work_busy;
	int work_rc;
	struct rd_err work_err;
	struct parked *parked;
	uv_timer_t reaper;
	bool reaper_armed;
	bool reaped;
};

struct serve {
	struct serve_cfg cfg;
	char **roots;
	size_t nroots;
	char *prefix;
	uv_tcp_t listener;
	bool listening;
	struct sockaddr_storage bound;
	struct sjob *jobs;
	struct fresh *fresh;
	bool shutting_down;
};

static const struct conn_ops fresh_ops, ctl_ops, parked_ops;

static void job_end(struct sjob *j);

/* ---------------------------------------------------------------------
 * Messages to the sender
 */

static void
send_frame(struct sjob *j, uint8_t type, uint64_t val, const char *text)
{
	struct frame f = { .type = type, .val = val };

	if (j->ctl == NULL)
		return;
	f.len = text != NULL ? strlen(text) : 0;
	if (f.len > PROTO_MAX_TEXT)
		f.len = PROTO_MAX_TEXT;
	conn_send_copy(j->ctl, &f, text);
}

/* Fail the job: tell the sender why (once) and release everything. */
static void
job_fail(struct sjob *j, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
job_fail(struct sjob *j, int error, const char *fmt, ...)
{
	char reason[PROTO_MAX_TEXT];
	va_list ap;

	if (j->state == JS_ENDED)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	log_info("job %s: failed: %s", j->tag, reason);
	send_frame(j, j->state == JS_SETUP ? MSG_REFUSE : MSG_FAIL,
		   (uint64_t)(error < 0 ? -error : EIO), reason);
	job_end(j);
}

/* ---------------------------------------------------------------------
 * Job life cycle
 */

static void
job_unlink(struct sjob *j)
{
	if (j->prev != NULL)
		j->prev->next = j->next;
	else
		j->s->jobs = j->next;
	if (j->next != NULL)
		j->next->prev = j->prev;
}

static void
on_reaper_closed(uv_handle_t *h)
{
	free(h->data);
}

static void
job_destroy(struct sjob *j)
{
	job_unlink(j);
	conn_free(j->ctl);
	j->ctl = NULL;
	uv_close((uv_handle_t *)&j->reaper, on_reaper_closed);
}

/* Release what the job holds; uncommitted temporaries are removed. */
static void
job_release(struct sjob *j)
{
	struct parked *pk, *next;

	eng_free(j->eng);
	j->eng = NULL;
	for (pk = j->parked; pk != NULL; pk = next) {
		next = pk->next;
		conn_free(pk->c);
		free(pk);
	}
	j->parked = NULL;
	store_free(j->st);
	j->st = NULL;
	roster_free(j->ro);
	j->ro = NULL;
	job_free(j->job);
	j->job = NULL;
}

static void
reap(uv_timer_t *t)
{
	struct sjob *j = t->data;

	if (j->work_busy || j->reaped)
		return;		/* setup_done comes back here */
	j->reaped = true;
	job_release(j);
	if (j->ctl != NULL && !j->s->shutting_down)
		conn_shutdown(j->ctl);	/* flush, then wait for the close */
	else
		job_destroy(j);
}

/* Stop the job; resources go on the next loop turn, never from inside
 * the engine or a connection callback. */
static void
job_end(struct sjob *j)
{
	j->state = JS_ENDED;
	if (!j->reaper_armed) {
		j->reaper_armed = true;
		uv_timer_start(&j->reaper, reap, 0, 0);
	}
}

static void
maybe_land(struct sjob *j)
{
	struct rd_err err = { 0 };
	uint32_t crc = 0;

	if (!j->complete || j->landed || j->state != JS_RUNNING)
		return;
	if (j->job->flags & JOB_VERIFY) {
		if (!j->crc_known)
			return;
		crc = store_stream_crc(j->st);
		if (crc != j->crc_expected) {
			job_fail(j, -EIO, "checksum mismatch: wrote %08x, the "
				 "sender has %08x", crc, j->crc_expected);
			return;
		}
	}
	if (store_commit(j->st, &err) < 0) {
		job_fail(j, err.code, "%s", err.msg);
		return;
	}
	j->landed = true;
	log_info("job %s: complete, %llu bytes in place", j->tag,
		 (unsigned long long)store_total(j->st));
	send_frame(j, MSG_COMPLETE, crc, NULL);
	if (j->eng_done)
		job_end(j);
}

/* ---------------------------------------------------------------------
 * Engine
 */

static int
blocks_iov(void *ctx, uint64_t block, struct iovec *iov, int max)
{
	return store_iov(ctx, block, iov, max);
}

static int
blocks_arrived(void *ctx, uint64_t block)
{
	return store_arrived(ctx, block);
}

static void
on_complete(void *ctx)
{
	struct sjob *j = ctx;

	j->complete = true;
	maybe_land(j);
}

static void
on_done(void *ctx, int status, uint32_t peer)
{
	struct sjob *j = ctx;
	char addr[NET_ADDRSTRLEN] = "?";

	j->eng_done = true;
	if (status == 0) {
		if (j->landed)
			job_end(j);
		return;
	}
	if (peer < j->ro->n)
		net_format(&j->ro->addrs[peer], addr, sizeof(addr));
	if (peer == ENG_NO_PEER)
		job_fail(j, status, "%s", eng_strerror(status));
	else
		job_fail(j, status, "lost connection to rank %u (%s): %s",
			 peer, peer == 0 ? "the sender" : addr,
			 eng_strerror(status));
}

static int
adopt(struct sjob *j, struct conn *c, uint32_t from, uint32_t to)
{
	if (to != j->ro->rank)
		return -EPROTO;
	return xtcp_adopt(eng_xport(j->eng), c, from);
}

static int
start_engine(struct sjob *j)
{
	struct serve *s = j->s;
	struct xtcp_cfg xc = {
		.loop = s->cfg.loop, .rank = j->ro->rank, .n = j->ro->n,
		.addrs = j->ro->addrs, .bind = &j->ro->addrs[j->ro->rank],
		.connect_timeout_ms = s->cfg.connect_timeout_ms,
		.timeout_ms = j->job->timeout_ms,
	};
	struct eng_cfg ec = {
		.loop = s->cfg.loop, .alg = j->job->alg, .n = j->ro->n,
		.rank = j->ro->rank, .blocks = store_blocks(j->st),
		.window = j->job->window,
		.io = { blocks_iov, blocks_arrived, j->st },
		.complete = on_complete, .done = on_done, .ctx = j,
	};
	struct parked *pk;
	int rc;

	memcpy(xc.token, j->job->token, PROTO_TOKEN_LEN);
	rc = xtcp_new(&xc, &ec.xp);
	if (rc < 0)
		return rc;
	rc = eng_new(&ec, &j->eng);
	if (rc < 0) {
		xp_free(ec.xp);
		return rc;
	}
	rc = eng_start(j->eng);
	while (rc == 0 && (pk = j->parked) != NULL) {
		j->parked = pk->next;
		rc = adopt(j, pk->c, pk->from, pk->to);
		if (rc < 0)
			conn_free(pk->c);
		free(pk);
	}
	return rc;
}

static int
on_start(struct sjob *j, const struct frame *f, const uint8_t *body)
{
	struct rd_err err = { 0 };
	int rc;

	if (j->state != JS_READY)
		return -EPROTO;
	rc = roster_decode(body, f->len, &j->ro, &err);
	if (rc < 0)
		return rc;
	j->state = JS_RUNNING;
	log_info("job %s: rank %u of %u", j->tag, j->ro->rank, j->ro->n);
	rc = start_engine(j);
	if (rc < 0)
		job_fail(j, rc, "cannot start: %s", strerror(-rc));
	return 0;
}

/* ---------------------------------------------------------------------
 * Control connection
 */

static int
ctl_header(void *ctx, struct conn *c, const struct frame *f,
	   const struct iovec **iov, int *niov)
{
	return f->len <= proto_max_len(f->type) ? 0 : -EMSGSIZE;
}

static int
ctl_frame(void *ctx, struct conn *c, const struct frame *f,
	  const uint8_t *body)
{
	struct sjob *j = ctx;

	if (j->state == JS_ENDED)
		return 0;
	switch (f->type) {
	case MSG_START:
		return on_start(j, f, body);
	case MSG_CRC:
		if (j->state != JS_RUNNING || !(j->job->flags & JOB_VERIFY))
			return -EPROTO;
		j->crc_known = true;
		j->crc_expected = (uint32_t)f->val;
		maybe_land(j);
		return 0;
	case MSG_ABORT:
		log_info("job %s: aborted by the sender", j->tag);
		job_end(j);
		return 0;
	default:
		return -EPROTO;
	}
}

static void
ctl_close(void *ctx, struct conn *c, int status)
{
	struct sjob *j = ctx;

	conn_free(j->ctl);
	j->ctl = NULL;
	if (j->state == JS_ENDED) {
		if (j->reaped)
			job_destroy(j);
		return;
	}
	if (!j->landed)
		log_info("job %s: the sender went away (%s); discarding",
			 j->tag, status < 0 ? strerror(-status) : "closed");
	job_end(j);
}

static const struct conn_ops ctl_ops = {
	.on_header = ctl_header,
	.on_frame = ctl_frame,
	.on_close = ctl_close,
};

static void
setup_run(uv_work_t *w)
{
	struct sjob *j = w->data;
	struct serve *s = j->s;
	struct store_policy pol = {
		.roots = (const char *const *)s->roots, .nroots = s->nroots,
		.prefix = s->prefix, .force = (j->job->flags & JOB_FORCE) != 0,
	};

	j->work_rc = store_create(j->job, &pol, &j->st, &j->work_err);
	if (j->work_rc == 0 && (j->job->flags & JOB_VERIFY))
		j->work_rc = store_track_crc(j->st);
}

static void
setup_done(uv_work_t *w, int status)
{
	struct sjob *j = w->data;

	j->work_busy = false;
	if (j->state == JS_ENDED) {
		if (!uv_is_active((uv_handle_t *)&j->reaper))
			reap(&j->reaper);
		return;
	}
	if (j->work_rc < 0) {
		job_fail(j, j->work_rc, "%s", j->work_err.code
				 ? j->work_err.msg : strerror(-j->work_rc));
		return;
	}
	j->state = JS_READY;
	send_frame(j, MSG_ACCEPT, 0, NULL);
}

static void
describe_job(struct sjob *j)
{
	log_info("job %s from %s (%s): %u files, %llu bytes, %s, %u-byte "
		 "blocks%s%s", j->tag, j->job->origin, conn_peer(j->ctl),
		 j->job->nfiles, (unsigned long long)j->job->total,
		 sched_alg_name(j->job->alg), j->job->block_size,
		 (j->job->flags & JOB_VERIFY) ? ", verify" : "",
		 (j->job->flags & JOB_FORCE) ? ", force" : "");
}

/* A decoded JOB on a fresh connection: the connection becomes the job's
 * control connection.  Returns -errno to drop the connection. */
static int
job_new(struct serve *s, struct conn *c, struct job *job)
{
	struct sjob *j;

	j = calloc(1, sizeof(*j));
	if (j == NULL) {
		job_free(job);
		return -ENOMEM;
	}
	j->s = s;
	j->job = job;
	j->ctl = c;
	snprintf(j->tag, sizeof(j->tag), "%02x%02x%02x%02x", job->token[0],
		 job->token[1], job->token[2], job->token[3]);
	uv_timer_init(s->cfg.loop, &j->reaper);
	j->reaper.data = j;
	j->next = s->jobs;
	if (s->jobs != NULL)
		s->jobs->prev = j;
	s->jobs = j;
	conn_set_owner(c, &ctl_ops, j);
	conn_set_body_limit(c, proto_max_len(MSG_START));
	/* the sender's timeout governs its job from here on */
	conn_keepalive(c, 0, job->timeout_ms);
	describe_job(j);
	j->work.data = j;
	j->work_busy = uv_queue_work(s->cfg.loop, &j->work, setup_run,
				     setup_done) == 0;
	if (!j->work_busy)
		job_fail(j, -ENOMEM, "cannot queue the job");
	return 0;
}

/* ---------------------------------------------------------------------
 * Data connections
 */

static struct sjob *
find_job(struct serve *s, const uint8_t *token)
{
	struct sjob *j;

	for (j = s->jobs; j != NULL; j = j->next)
		if (j->job != NULL &&
		    memcmp(j->job->token, token, PROTO_TOKEN_LEN) == 0)
			return j;
	return NULL;
}

static int
parked_header(void *ctx, struct conn *c, const struct frame *f,
	      const struct iovec **iov, int *niov)
{
	return -EPROTO;		/* nothing may come before START */
}

static int
parked_frame(void *ctx, struct conn *c, const struct frame *f,
	     const uint8_t *body)
{
	return -EPROTO;
}

static void
parked_close(void *ctx, struct conn *c, int status)
{
	struct parked *pk = ctx, **pp;

	for (pp = &pk->j->parked; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == pk) {
			*pp = pk->next;
			break;
		}
	}
	conn_free(c);
	free(pk);
}

static const struct conn_ops parked_ops = {
	.on_header = parked_header,
	.on_frame = parked_frame,
	.on_close = parked_close,
};

static int
route_hello(struct serve *s, struct conn *c, const struct frame *f,
	    const uint8_t *body)
{
	struct hello h;
	struct sjob *j;
	struct parked *pk;

	if (hello_decode(body, f->len, &h) < 0)
		return -EPROTO;
	j = find_job(s, h.token);
	if (j == NULL || j->state == JS_ENDED || j->state == JS_SETUP)
		return -ENOENT;
	if (j->state == JS_RUNNING)
		return adopt(j, c, h.from, h.to);
	pk = calloc(1, sizeof(*pk));
	if (pk == NULL)
		return -ENOMEM;
	pk->j = j;
	pk->c = c;
	pk->from = h.from;
	pk->to = h.to;
	pk->next = j->parked;
	j->parked = pk;
	conn_pause(c);
	conn_set_owner(c, &parked_ops, pk);
	return 0;
}

/* ---------------------------------------------------------------------
 * Fresh connections
 */

static void
fresh_unlink(struct fresh *fr)
{
	if (fr->prev != NULL)
		fr->prev->next = fr->next;
	else
		fr->s->fresh = fr->next;
	if (fr->next != NULL)
		fr->next->prev = fr->prev;
}

static int
fresh_header(void *ctx, struct conn *c, const struct frame *f,
	     const struct iovec **iov, int *niov)
{
	if (f->type != MSG_JOB && f->type != MSG_HELLO)
		return -EPROTO;
	return f->len <= proto_max_len(f->type) ? 0 : -EMSGSIZE;
}

/* Refuse a malformed job: say why, then close once it is out (the fresh
 * record keeps owning the connection until then). */
static int
refuse_bad_job(struct fresh *fr, const char *why)
{
	char msg[PROTO_MAX_TEXT];
	struct frame f = { .type = MSG_REFUSE, .val = EBADMSG };

	snprintf(msg, sizeof(msg), "bad job: %s", why);
	f.len = strlen(msg);
	log_info("refused a job from %s: %s", conn_peer(fr->c), why);
	conn_send_copy(fr->c, &f, msg);
	conn_shutdown(fr->c);
	fr->refused = true;
	return 0;
}

static int
fresh_frame(void *ctx, struct conn *c, const struct frame *f,
	    const uint8_t *body)
{
	struct fresh *fr = ctx;
	struct serve *s = fr->s;
	struct rd_err err = { 0 };
	struct job *job;
	int rc;

	if (fr->refused)
		return -EPROTO;
	if (f->type == MSG_JOB && job_decode(body, f->len, &job, &err) < 0)
		return refuse_bad_job(fr, err.msg);
	fresh_unlink(fr);
	free(fr);
	if (f->type == MSG_JOB)
		rc = job_new(s, c, job);
	else
		rc = route_hello(s, c, f, body);
	if (rc < 0)
		conn_free(c);	/* the connection was ours alone */
	return 0;
}

static void
fresh_close(void *ctx, struct conn *c, int status)
{
	struct fresh *fr = ctx;

	fresh_unlink(fr);
	conn_free(c);
	free(fr);
}

static const struct conn_ops fresh_ops = {
	.on_header = fresh_header,
	.on_frame = fresh_frame,
	.on_close = fresh_close,
};

static void
on_incoming(uv_stream_t *server, int status)
{
	struct serve *s = server->data;
	struct fresh *fr;

	if (status < 0) {
		log_warn("accept: %s", uv_strerror(status));
		return;
	}
	fr = calloc(1, sizeof(*fr));
	if (fr == NULL)
		return;
	fr->s = s;
	if (conn_accept(server, &fresh_ops, fr, &fr->c) < 0) {
		free(fr);
		return;
	}
	conn_set_body_limit(fr->c, PROTO_MAX_BODY);
	conn_keepalive(fr->c, 0, s->cfg.timeout_ms);
	fr->next = s->fresh;
	if (s->fresh != NULL)
		s->fresh->prev = fr;
	s->fresh = fr;
}

/* ---------------------------------------------------------------------
 * Daemon
 */

static int
add_root(struct serve *s, const char *dir, struct rd_err *err)
{
	char real[PATH_MAX];
	struct stat sb;

	if (realpath(dir, real) == NULL)
		return rd_errf(err, -errno, "root %s: %s", dir,
			       strerror(errno));
	if (stat(real, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return rd_errf(err, -ENOTDIR, "root %s is not a directory",
			       dir);
	s->roots[s->nroots] = strdup(real);
	if (s->roots[s->nroots] == NULL)
		return -ENOMEM;
	s->nroots++;
	return 0;
}

static int
serve_setup_paths(struct serve *s, struct rd_err *err)
{
	char real[PATH_MAX];
	size_t i;
	int rc = 0;

	s->roots = calloc(s->cfg.nroots + 1, sizeof(*s->roots));
	if (s->roots == NULL)
		return -ENOMEM;
	if (s->cfg.prefix != NULL) {
		if (realpath(s->cfg.prefix, real) == NULL)
			return rd_errf(err, -errno, "prefix %s: %s",
				       s->cfg.prefix, strerror(errno));
		s->prefix = strdup(real);
		if (s->prefix == NULL)
			return -ENOMEM;
		if (s->cfg.nroots == 0)
			rc = add_root(s, real, err);
	}
	for (i = 0; i < s->cfg.nroots && rc == 0; i++)
		rc = add_root(s, s->cfg.roots[i], err);
	if (rc == 0 && s->nroots == 0)
		rc = rd_errf(err, -EINVAL, "no --root directory to write to");
	return rc;
}

static int
serve_listen(struct serve *s, struct rd_err *err)
{
	char addr[NET_ADDRSTRLEN];
	int rc, len = sizeof(s->bound);

	net_format(&s->cfg.listen, addr, sizeof(addr));
	uv_tcp_init(s->cfg.loop, &s->listener);
	s->listener.data = s;
	s->listening = true;
	rc = uv_tcp_bind(&s->listener, (struct sockaddr *)&s->cfg.listen, 0);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&s->listener, 1024, on_incoming);
	if (rc < 0)
		return rd_errf(err, rc, "cannot listen on %s: %s", addr,
			       uv_strerror(rc));
	uv_tcp_getsockname(&s->listener, (struct sockaddr *)&s->bound, &len);
	net_format(&s->bound, addr, sizeof(addr));
	log_info("serving on %s", addr);
	return 0;
}

int
serve_new(const struct serve_cfg *cfg, struct serve **out,
	  struct rd_err *err)
{
	struct serve *s;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->cfg = *cfg;
	rc = serve_setup_paths(s, err);
	if (rc == 0)
		rc = serve_listen(s, err);
	if (rc < 0) {
		serve_shutdown(s);
		uv_run(cfg->loop, UV_RUN_DEFAULT);
		serve_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void
serve_address(const struct serve *s, struct sockaddr_storage *out)
{
	*out = s->bound;
}

void
serve_shutdown(struct serve *s)
{
	struct sjob *j, *jn;
	struct fresh *fr, *fn;

	s->shutting_down = true;
	if (s->listening)
		uv_close((uv_handle_t *)&s->listener, NULL);
	s->listening = false;
	for (fr = s->fresh; fr != NULL; fr = fn) {
		fn = fr->next;
		conn_free(fr->c);
		free(fr);
	}
	s->fresh = NULL;
	for (j = s->jobs; j != NULL; j = jn) {
		jn = j->next;
		if (j->state != JS_ENDED)
			log_info("job %s: stopped by shutdown", j->tag);
		j->state = JS_ENDED;
		if (!j->reaper_armed) {
			j->reaper_armed = true;
			uv_timer_start(&j->reaper, reap, 0, 0);
		}
	}
}

void
serve_free(struct serve *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nroots; i++)
		free(s->roots[i]);
	free(s->roots);
	free(s->prefix);
	free(s);
}
