/*
 * push - the sending side of a transfer (see push.h).
 */
#include "push_int.h"

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <uv.h>

#include "auth.h"
#include "conn.h"
#include "engine.h"
#include "net.h"
#include "proto.h"
#include "store.h"

/* After the first failure inside the group, wait this long before aborting
 * the others, so that each host that really failed (a dead daemon, a lost
 * link) is reported with its own reason rather than as a casualty. */
#define ABORT_GRACE_MS 300

static const struct conn_ops ctl_ops;

double
push_elapsed(const struct push *p)
{
	return (double)(uv_hrtime() - p->t0) / 1e9;
}

static void progress(struct push *p);

/* ---------------------------------------------------------------------
 * Outcomes
 */

/* Sum up the daemons' reports for cfg->progress. */
static void
progress(struct push *p)
{
	struct push_progress pr = { .hosts = p->nh, .seconds = push_elapsed(p) };
	uint64_t bytes = p->sum->bytes, bs = p->cfg->block_size, got;
	size_t i;

	if (p->cfg->progress == NULL)
		return;
	pr.bytes_total = bytes * p->nh;
	for (i = 0; i < p->nh; i++) {
		const struct phost *h = &p->h[i];

		got = h->held * bs < bytes ? h->held * bs : bytes;
		if (h->st == HS_DONE)
			got = bytes;
		pr.bytes_done += got;
		pr.done += h->st == HS_DONE;
		pr.failed += h->st == HS_FAILED;
	}
	p->cfg->progress(p->cfg->ctx, &pr);
}

static void
report(struct push *p, struct phost *h, bool ok, int error,
       const char *reason)
{
	struct push_report r = {
		.index = h->idx, .host = h->name, .addr = h->addrstr,
		.ok = ok, .error = error, .reason = reason,
		.seconds = push_elapsed(p), .rank = h->rank,
		.bytes = p->sum->bytes, .permanent = h->refused,
	};

	if (ok) {
		if (p->sum->ok == 0)
			p->sum->first_ok = r.seconds;
		p->sum->last_ok = r.seconds;
		p->sum->ok++;
	} else {
		p->sum->failed++;
	}
	p->sum->seconds = r.seconds;
	if (p->cfg->report != NULL)
		p->cfg->report(p->cfg->ctx, &r);
}

/* A host's outcome is failure.  If it was running in the group, the group
 * cannot finish without it: abort the others. */
void
push_host_fail(struct phost *h, int error, const char *fmt, ...)
{
	struct push *p = h->p;
	enum hstate was = h->st;
	char reason[600];
	va_list ap;

	if (was == HS_DONE || was == HS_FAILED)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	h->st = HS_FAILED;
	conn_free(h->c);
	h->c = NULL;
	if (was < HS_ACCEPTED)
		p->undecided--;
	p->unfinished--;
	report(p, h, false, error, reason);
	progress(p);
	if (was == HS_RUNNING)
		push_abort_group(p, h, reason);
	if (was < HS_ACCEPTED)
		pg_maybe_start(p);
	push_maybe_finish(p);
}

static void
host_done(struct phost *h)
{
	h->st = HS_DONE;
	h->p->unfinished--;
	report(h->p, h, true, 0, NULL);
	progress(h->p);
	push_maybe_finish(h->p);
}

static void
send_text(struct phost *h, uint8_t type, const char *text)
{
	struct frame f = { .type = type, .len = strlen(text) };

	if (h->c != NULL)
		conn_send_copy(h->c, &f, text);
}

/* Abort every member still running, naming those that failed. */
static void
abort_now(uv_timer_t *t)
{
	struct push *p = t->data;
	char reason[600], *at = reason, *end = reason + sizeof(reason);
	size_t i, named = 0;

	at += snprintf(at, end - at, "aborted: the group lost");
	for (i = 0; i < p->nh && named < 3; i++)
		if (p->h[i].st == HS_FAILED && p->h[i].rank > 0)
			at += snprintf(at, end - at, "%s %s",
				       named++ ? "," : "", p->h[i].name);
	if (named == 0)
		snprintf(reason, sizeof(reason), "aborted: %s", p->abort_why);
	for (i = 0; i < p->nh; i++) {
		if (p->h[i].st != HS_RUNNING)
			continue;
		send_text(&p->h[i], MSG_ABORT, reason);
		if (&p->h[i] == p->suspect)
			push_host_fail(&p->h[i], -ECONNRESET, "%s", p->suspect_why);
		else
			push_host_fail(&p->h[i], -ECANCELED, "%s", reason);
	}
}

void
push_abort_group(struct push *p, const struct phost *cause, const char *why)
{
	if (p->aborting)
		return;
	p->aborting = true;
	snprintf(p->abort_why, sizeof(p->abort_why), "%s", why);
	log_info("group broken (%s: %s); aborting in %d ms",
		 cause != NULL ? cause->name : "sender", why, ABORT_GRACE_MS);
	uv_timer_start(&p->aborter, abort_now, ABORT_GRACE_MS, 0);
}

/* ---------------------------------------------------------------------
 * Control connection
 */

static int
ctl_header(void *ctx, struct conn *c, const struct frame *f,
	   const struct iovec **iov, int *niov)
{
	if (f->len > proto_max_len(f->type))
		return -EMSGSIZE;
	return 0;
}

static void
copy_text(char *dst, size_t len, const uint8_t *body, uint64_t n)
{
	size_t i, m = n < len - 1 ? (size_t)n : len - 1;

	for (i = 0; i < m; i++)
		dst[i] = (body[i] >= 0x20 && body[i] < 0x7f) ? (char)body[i]
							      : '?';
	dst[m] = '\0';
}

/* A host holds its copy but could not pass blocks on: those it was to
 * feed cannot finish, so the group is broken. */
static void
relay_failed(struct phost *h, const char *text)
{
	char why[400];

	snprintf(why, sizeof(why), "%s could not relay: %.300s", h->name,
		 text);
	push_abort_group(h->p, h, why);
}

static int
on_complete_msg(struct phost *h, const struct frame *f)
{
	struct push *p = h->p;

	if (h->st != HS_RUNNING)
		return -EPROTO;
	if (p->cfg->verify && (!p->crc_ready || f->val != p->crc)) {
		push_host_fail(h, -EIO, "checksum mismatch: wrote %08llx, sent "
			  "%08x", (unsigned long long)f->val, p->crc);
		return 0;
	}
	host_done(h);
	return 0;
}

static int on_challenge(struct phost *h, const struct frame *f,
			const uint8_t *body);

static int
ctl_frame(void *ctx, struct conn *c, const struct frame *f,
	  const uint8_t *body)
{
	struct phost *h = ctx;
	char text[PROTO_MAX_TEXT + 1];

	switch (f->type) {
	case MSG_CHALLENGE:
		return on_challenge(h, f, body);
	case MSG_ACCEPT:
		if (h->st != HS_OFFERED)
			return -EPROTO;
		h->st = HS_ACCEPTED;
		h->rdma_port = (uint16_t)f->val;
		h->p->undecided--;
		pg_maybe_start(h->p);
		return 0;
	case MSG_REFUSE:
	case MSG_FAIL:
		copy_text(text, sizeof(text), body, f->len);
		h->refused = f->type == MSG_REFUSE;
		if (h->st == HS_DONE)
			relay_failed(h, text);
		else
			push_host_fail(h, -(int)(f->val & 0xffff), "%s", text);
		return 0;
	case MSG_COMPLETE:
		return on_complete_msg(h, f);
	case MSG_PROGRESS:
		if (h->st != HS_RUNNING)
			return 0;	/* may cross an abort */
		h->held = f->val;
		progress(h->p);
		return 0;
	default:
		return -EPROTO;
	}
}

static void
ctl_close(void *ctx, struct conn *c, int status)
{
	struct phost *h = ctx;

	if (status < 0)
		push_host_fail(h, status, "connection to %s lost: %s", h->addrstr,
			  strerror(-status));
	else
		push_host_fail(h, -ECONNRESET, "the daemon at %s went away",
			  h->addrstr);
}

static void
ctl_connect(void *ctx, struct conn *c, int status)
{
	struct phost *h = ctx;
	struct push *p = h->p;
	struct frame f = { .type = MSG_AUTH, .len = AUTH_NONCE_LEN };

	if (status == 0)
		status = auth_nonce(h->nonce);
	if (status == 0)
		status = conn_send_copy(c, &f, h->nonce);
	if (status < 0) {
		push_host_fail(h, status, "cannot connect to %s: %s", h->addrstr,
			  status == -ETIMEDOUT ? "timed out" : strerror(-status));
		return;
	}
	conn_set_body_limit(c, 4 + PROTO_MAX_TEXT);
	conn_keepalive(c, 0, p->cfg->timeout_ms);
	h->st = HS_AUTH;
}

/* CHALLENGE: check the daemon's proof, then send ours and the job it
 * covers. */
static int
on_challenge(struct phost *h, const struct frame *f, const uint8_t *body)
{
	struct push *p = h->p;
	const uint8_t *nonce_d = body, *theirs = body + AUTH_NONCE_LEN;
	uint8_t want[AUTH_MAC_LEN], proof[AUTH_MAC_LEN];
	struct frame pf = { .type = MSG_PROOF, .len = AUTH_MAC_LEN };
	struct frame jf = { .type = MSG_JOB, .len = p->jobmsg.len };
	struct iovec iov = { p->jobmsg.data, p->jobmsg.len };
	int rc;

	if (h->st != HS_AUTH || f->len != 2 * AUTH_NONCE_LEN)
		return -EPROTO;
	rc = auth_daemon_mac(p->cfg->key, h->nonce, nonce_d, want);
	if (rc == 0 && !auth_mac_equal(want, theirs)) {
		h->refused = true;
		push_host_fail(h, -EACCES, "authentication failed: the daemon at "
			  "%s does not hold our key", h->addrstr);
		return 0;
	}
	if (rc == 0)
		rc = auth_sender_mac(p->cfg->key, h->nonce, nonce_d,
				     p->jobmsg.data, p->jobmsg.len, proof);
	if (rc == 0)
		rc = conn_send_copy(h->c, &pf, proof);
	if (rc == 0)
		rc = conn_send(h->c, &jf, &iov, 1, 0);
	if (rc < 0)
		return rc;
	h->st = HS_OFFERED;
	return 0;
}

static const struct conn_ops ctl_ops = {
	.on_header = ctl_header,
	.on_frame = ctl_frame,
	.on_connect = ctl_connect,
	.on_close = ctl_close,
};

static void
host_connect(struct phost *h)
{
	struct push *p = h->p;
	int rc;

	net_format(&h->addr, h->addrstr, sizeof(h->addrstr));
	h->st = HS_CONNECTING;
	rc = conn_connect(&p->loop, (struct sockaddr *)&h->addr,
			  p->has_src ? (struct sockaddr *)&p->src : NULL,
			  p->cfg->connect_timeout_ms, &ctl_ops, h, &h->c);
	if (rc < 0)
		push_host_fail(h, rc, "cannot connect to %s: %s", h->addrstr,
			  uv_strerror(rc));
}

static void
on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res)
{
	struct phost *h = req->data;

	if (status < 0 || res == NULL) {
		push_host_fail(h, -EHOSTUNREACH, "cannot resolve %s: %s", h->host,
			  uv_strerror(status));
	} else {
		memset(&h->addr, 0, sizeof(h->addr));
		memcpy(&h->addr, res->ai_addr, res->ai_addrlen);
		net_set_port(&h->addr, h->port);
		host_connect(h);
	}
	uv_freeaddrinfo(res);
}

static void
host_begin(struct phost *h)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	int rc;

	if (net_split_hostport(h->name, h->host, sizeof(h->host), &h->port,
			       h->p->cfg->default_port) < 0) {
		push_host_fail(h, -EINVAL, "bad host '%s'", h->name);
		return;
	}
	if (net_parse_numeric(h->host, h->port, &h->addr) == 0) {
		host_connect(h);
		return;
	}
	h->gai.data = h;
	rc = uv_getaddrinfo(&h->p->loop, &h->gai, on_resolved, h->host, NULL,
			    &hints);
	if (rc < 0)
		push_host_fail(h, rc, "cannot resolve %s: %s", h->host,
			  uv_strerror(rc));
}

/* ---------------------------------------------------------------------
 * The end
 */

static void
on_finisher_closed(uv_handle_t *h)
{
}

static void
finish_now(uv_timer_t *t)
{
	struct push *p = t->data;
	size_t i;

	for (i = 0; i < p->nh; i++) {
		conn_free(p->h[i].c);
		p->h[i].c = NULL;
	}
	eng_free(p->eng);
	p->eng = NULL;
	vb_free(p->vb);
	p->vb = NULL;
	uv_close((uv_handle_t *)&p->finisher, on_finisher_closed);
	uv_close((uv_handle_t *)&p->aborter, on_finisher_closed);
}

void
push_maybe_finish(struct push *p)
{
	if (p->finishing || p->unfinished > 0 || p->crc_busy)
		return;
	if (p->eng != NULL && !p->eng_done && !p->aborting)
		return;
	p->finishing = true;
	uv_timer_start(&p->finisher, finish_now, 0, 0);
}

/* ---------------------------------------------------------------------
 * Setup
 */

static int
build_job(struct push *p, struct rd_err *err)
{
	const struct push_cfg *cfg = p->cfg;
	struct job job = {
		.alg = cfg->alg, .block_size = cfg->block_size,
		.timeout_ms = cfg->timeout_ms,
		.window = cfg->window ? cfg->window : ENG_DEFAULT_WINDOW,
		.transport = cfg->transport,
		.flags = (cfg->verify ? JOB_VERIFY : 0) |
			 (cfg->force ? JOB_FORCE : 0) |
			 (cfg->times ? JOB_TIMES | JOB_OWNERS : 0),
		.nfiles = (uint32_t)cfg->nfiles,
	};
	char host[256] = "";
	size_t i;
	int rc;

	if (getrandom(p->token, sizeof(p->token), 0) != sizeof(p->token))
		return rd_errf(err, -EIO, "no random bytes for the job token");
	memcpy(job.token, p->token, sizeof(p->token));
	gethostname(host, sizeof(host) - 1);
	job.origin = host;
	job.files = calloc(cfg->nfiles ? cfg->nfiles : 1, sizeof(*job.files));
	if (job.files == NULL)
		return -ENOMEM;
	for (i = 0; i < cfg->nfiles; i++) {
		job.files[i] = cfg->files[i];
		if (cfg->sources[i] != NULL)	/* as opened, not as listed */
			store_file(p->st, i, &job.files[i].size,
				   &job.files[i].mode);
	}
	wbuf_init(&p->jobmsg);
	rc = job_encode(&job, &p->jobmsg);
	free(job.files);
	if (rc == 0 && p->jobmsg.len > PROTO_MAX_BODY)
		rc = rd_errf(err, -E2BIG, "the file list is too long");
	return rc;
}

static int
push_init(struct push *p, const struct push_cfg *cfg,
	  struct push_summary *sum, struct rd_err *err)
{
	size_t i;
	int rc;

	p->cfg = cfg;
	p->sum = sum;
	memset(sum, 0, sizeof(*sum));
	sum->hosts = cfg->nhosts;
	sum->transport = "tcp";
	p->t0 = uv_hrtime();
	rc = store_open_sources(cfg->sources, cfg->nfiles, cfg->block_size,
				&p->st, err);
	if (rc < 0)
		return rc;
	sum->bytes = store_total(p->st);
	rc = build_job(p, err);
	if (rc < 0)
		return rc;
	p->h = calloc(cfg->nhosts ? cfg->nhosts : 1, sizeof(*p->h));
	if (p->h == NULL)
		return -ENOMEM;
	p->nh = p->undecided = p->unfinished = cfg->nhosts;
	if (cfg->bind != NULL) {
		if (net_parse_numeric(cfg->bind, 0, &p->src) < 0)
			return rd_errf(err, -EINVAL, "bad source address '%s' "
				       "(numeric)", cfg->bind);
		p->has_src = true;
	}
	for (i = 0; i < p->nh; i++) {
		p->h[i].p = p;
		p->h[i].idx = i;
		p->h[i].name = cfg->hosts[i];
	}
	rc = uv_loop_init(&p->loop);
	if (rc < 0)
		return rc;
	uv_timer_init(&p->loop, &p->finisher);
	uv_timer_init(&p->loop, &p->aborter);
	p->finisher.data = p->aborter.data = p;
	p->crc_work.data = p;
	return 0;
}

int
push_run(const struct push_cfg *cfg, struct push_summary *sum,
	 struct rd_err *err)
{
	struct push p;
	size_t i;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = push_init(&p, cfg, sum, err);
	if (rc < 0) {
		if (err != NULL && err->code == 0)
			rd_errf(err, rc, "%s", strerror(-rc));
		goto out;
	}
	for (i = 0; i < p.nh; i++)
		host_begin(&p.h[i]);
	pg_maybe_start(&p);
	push_maybe_finish(&p);
	uv_run(&p.loop, UV_RUN_DEFAULT);
	rc = uv_loop_close(&p.loop);
	if (rc < 0)	/* a handle left open: a bug, never to pass unseen */
		rd_errf(&p.fatal, rc, "internal error: the event loop did not "
			"close (%s)", uv_strerror(rc));
	rc = p.fatal.code;
	if (rc < 0 && err != NULL)
		*err = p.fatal;
out:
	wbuf_free(&p.jobmsg);
	free(p.by_rank);
	free(p.h);
	store_free(p.st);
	return rc;
}
