/* SPDX-License-Identifier: MIT */
/*
 * transfer - one transfer on a receiving daemon (see transfer.h).
 */
#include "daemon/transfer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "util/log.h"
#include "store/store.h"
#include "proto/trace.h"
#include "transport/tcp/tcp.h"
#include "transport/verbs/xv.h"
#include "daemon/partial.h"
#include "daemon/transfer_int.h"

#define TRACE_MAX_SPANS (1u << 20)

static const struct conn_ops ctl_ops;

/* ---------------------------------------------------------------------
 * Messages to the sender
 */

void
transfer_send(struct transfer *j, uint8_t type, uint32_t arg, uint64_t val,
	      const char *text)
{
	size_t len = text != NULL ? strlen(text) : 0;

	transfer_send_body(j, type, arg, val, text,
			   len > PROTO_MAX_TEXT ? PROTO_MAX_TEXT : len);
}

void
transfer_send_body(struct transfer *j, uint8_t type, uint32_t arg,
		   uint64_t val, const void *body, size_t len)
{
	struct frame f = { .type = type, .arg = arg, .val = val, .len = len };

	if (j->ctl == NULL)
		return;
	conn_send_copy(j->ctl, &f, body);
}

static void
send_frame(struct transfer *j, uint8_t type, uint64_t val, const char *text)
{
	transfer_send(j, type, PROTO_NO_PEER, val, text);
}

void
transfer_fail(struct transfer *j, int error, uint32_t peer, const char *fmt,
	      ...)
{
	char reason[PROTO_MAX_TEXT];
	va_list ap;

	if (j->state == JS_ENDED)
		return;
	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	log_info("job %s: failed: %s", j->tag, reason);
	transfer_send(j, j->state == JS_SETUP ? MSG_REFUSE : MSG_FAIL, peer,
		      (uint64_t)(error < 0 ? -error : EIO), reason);
	transfer_end(j);
}


/* ---------------------------------------------------------------------
 * Life cycle
 */

static void
on_handle_closed(uv_handle_t *h)
{
	struct transfer *j = h->data;

	if (--j->handles == 0)
		free(j);
}

static void
free_seen(struct transfer *j)
{
	free(j->seen);
	free(j->sums);
	free(j->theirs);
	free(j->digests);
	free(j->mine);
	j->mine = NULL;
	bset_free(j->need);
	free(j->partials);
	j->partials = NULL;
	free(j->goods);	/* (each given on, or freed, by keep_partials) */
	j->goods = NULL;
	j->seen = NULL;
	j->sums = j->theirs = NULL;
	j->digests = NULL;
	j->need = NULL;
}

static void
job_destroy(struct transfer *j)
{
	free_seen(j);
	trace_free(j->trace);
	j->trace = NULL;
	conn_free(j->ctl);
	j->ctl = NULL;
	j->env->gone(j->env->ctx, j);
	uv_close((uv_handle_t *)&j->reaper, on_handle_closed);
	uv_close((uv_handle_t *)&j->idle, on_handle_closed);
}

/* How long the control connection of a job dropped for idleness waits
 * for its sender's end, so that the FAIL is not lost in a reset. */
#define IDLE_LINGER_MS 5000

void
transfer_let_go(struct transfer *j)
{
	conn_linger(j->ctl, IDLE_LINGER_MS);
	j->ctl = NULL;
	job_destroy(j);
}

void
transfer_idle_fail(struct transfer *j, const char *reason)
{
	j->idled = true;
	job_fail(j, -ETIMEDOUT, "%s", reason);
}

/* A job that ends without landing leaves its copies to the next job of
 * the same sources (partial.h): its temporaries, open, their names gone
 * with the store; or, set up no further, the copies it was given. */
static void
keep_partials(struct transfer *j)
{
	size_t i;
	void *map;
	size_t len;
	int fd;

	for (i = 0; j->partials != NULL && i < j->job->nfiles; i++) {
		if (j->st == NULL || j->landed)
			continue;	/* given back as they were, or used */
		if (j->partials[i] >= 0)
			close(j->partials[i]);
		bset_free(j->goods[i]);
		j->goods[i] = NULL;
		store_mapping(j->st, i, &map, &len, &fd);
		j->partials[i] = fd >= 0 && len > 0
					 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
		if (j->partials[i] >= 0)
			store_good_ranges(j->st, i, &j->goods[i]);
	}
	if (j->landed) {
		for (i = 0; j->partials != NULL && i < j->job->nfiles; i++) {
			if (j->partials[i] >= 0)
				close(j->partials[i]);
			bset_free(j->goods[i]);
			j->goods[i] = NULL;
		}
		return;
	}
	if (j->partials != NULL)
		partials_keep(j->env->partials, j->job, j->partials, j->goods);
}

/* Release what the job holds; uncommitted temporaries are removed (kept
 * open for the next job, without landing: keep_partials). */
static void
job_release(struct transfer *j)
{
	eng_free(j->eng);
	j->eng = NULL;
	transfer_drop_parked(j);
	if (j->job != NULL)
		keep_partials(j);
	store_free(j->st);
	j->st = NULL;
	roster_free(j->ro);
	j->ro = NULL;
	job_free(j->job);
	j->job = NULL;
}

/* With JOB_TRACE: our timeline, to the sender, as the job ends. */
static void
send_trace(struct transfer *j)
{
	struct frame f = { .type = MSG_TRACE };
	struct wbuf w;

	if (j->trace == NULL || j->ctl == NULL)
		return;
	wbuf_init(&w);
	if (trace_encode(j->trace, j->t_job, j->t_accept, &w) == 0 &&
	    w.len <= PROTO_MAX_BODY) {
		f.len = w.len;
		conn_send_copy(j->ctl, &f, w.data);
	}
	wbuf_free(&w);
}

void
transfer_reap(uv_timer_t *t)
{
	struct transfer *j = t->data;

	if (j->work_busy || j->reaped)
		return;		/* setup_done comes back here */
	j->reaped = true;
	job_release(j);
	if (j->ctl == NULL || j->stopping) {
		job_destroy(j);
		return;
	}
	if (j->idled) {
		transfer_let_go(j);	/* its FAIL said why: no TRACE to wait */
		return;
	}
	if (j->trace != NULL && !j->trace_asked)
		return;		/* until the sender asks (or closes) */
	send_trace(j);
	conn_shutdown(j->ctl);	/* flush, then wait for the close */
}

/* TRACE from the sender: every member is done, our timeline may go (now,
 * or once the job ended). */
static int
on_trace_asked(struct transfer *j)
{
	if (j->trace == NULL || j->trace_asked)
		return 0;	/* none kept (out of memory): the sender's wait for
				 * it is bounded (fate.c) */
	j->trace_asked = true;
	if (j->reaped && j->ctl != NULL) {
		send_trace(j);
		conn_shutdown(j->ctl);
	}
	return 0;
}

void
transfer_end(struct transfer *j)
{
	j->state = JS_ENDED;
	if (!j->reaper_armed) {
		j->reaper_armed = true;
		uv_timer_start(&j->reaper, transfer_reap, 0, 0);
	}
}

/* ---------------------------------------------------------------------
 * Control connection (the engine, --verify and landing: run.c)
 */

/* DIGESTS: kept for the set-up REPLACE starts; one per stream block. */
static int
on_digests(struct transfer *j, const struct frame *f, const uint8_t *body)
{
	if (!(j->job->flags & JOB_DELTA) || j->digests != NULL ||
	    !j->asked_digests ||
	    f->len != job_blocks(j->job) * PROTO_DIGEST_LEN)
		return -EPROTO;
	j->digests = malloc(f->len ? f->len : 1);
	if (j->digests == NULL)
		return -ENOMEM;
	memcpy(j->digests, body, f->len);
	return 0;
}

/* ABORT: what became of the job, in one OUTCOME; a job that has not
 * landed ends here, without landing. */
static void
on_abort(struct transfer *j, const struct frame *f, const uint8_t *body)
{
	int len = f->len < 200 ? (int)f->len : 200;

	log_info("job %s: ended by the sender (%.*s)%s", j->tag, len,
		 body != NULL ? (const char *)body : "",
		 j->landed ? "; it had landed" : "");
	send_frame(j, MSG_OUTCOME, j->landed ? OUTCOME_LANDED
					     : OUTCOME_DISCARDED, NULL);
	transfer_end(j);
}

static int
ctl_header(void *ctx, struct conn *c, const struct frame *f,
	   const struct conn_seg **segs, int *nseg)
{
	return f->len <= proto_max_len(f->type) ? 0 : -EMSGSIZE;
}

static int
ctl_frame(void *ctx, struct conn *c, const struct frame *f,
	  const uint8_t *body)
{
	struct transfer *j = ctx;

	enum jstate next;
	bool wants;
	int rc;

	transfer_idle_progress(j);	/* a word from the sender, not a keepalive */
	rc = transfer_frame_step(j->state, j->go_received, f->type, &next);
	if (rc < 0)
		return rc;
	if (f->type == MSG_TRACE)
		return on_trace_asked(j);
	if (j->state == JS_ENDED)
		return 0;
	switch (f->type) {
	case MSG_START:
		return transfer_start(j, f, body);
	case MSG_CRC:
		j->go_received = true;
		j->crc_expected = (uint32_t)f->val;
		transfer_maybe_land(j);
		return 0;
	case MSG_ABORT:
		on_abort(j, f, body);
		return 0;
	case MSG_DIGESTS:	/* set up if REPLACE came and waits for them */
		if (j->state == JS_SETUP && j->fill != FILL_LOCAL)
			return -EPROTO;
		rc = on_digests(j, f, body);
		if (rc == 0 && j->replaced)
			transfer_digests_came(j);
		return rc;
	case MSG_REPLACE:	/* the sources' sums: settle, set up */
		if (j->replaced || replace_decode(body, f->len,
						  j->job->nfiles - j->parents,
						  j->theirs + j->parents) < 0)
			return -EPROTO;
		/* digests asked for come, wanted or not now: waited for */
		wants = transfer_settle_wants_digests(j);
		if (!wants && !(j->asked_digests && j->digests == NULL))
			return transfer_setup(j, true);
		j->replaced = true;
		if (!j->asked_digests)
			transfer_send(j, MSG_HAVE, HAVE_DIGESTS, 0, NULL);
		j->asked_digests = true;
		return wants ? transfer_prefill(j) : 0;
	default:
		return -EPROTO;
	}
}

static void
ctl_close(void *ctx, struct conn *c, int status)
{
	struct transfer *j = ctx;

	conn_free(j->ctl);
	j->ctl = NULL;
	if (j->state == JS_ENDED) {
		if (j->reaped)
			job_destroy(j);
		return;
	}
	if (j->state == JS_DRY || j->state == JS_SAME)
		log_info("job %s: %s", j->tag, j->state == JS_DRY
			 ? "dry run over" : "over: every entry was there");
	else if (!j->landed)
		log_info("job %s: the sender went away (%s); discarding",
			 j->tag, status < 0 ? strerror(-status) : "closed");
	transfer_end(j);
}

static const struct conn_ops ctl_ops = {
	.on_header = ctl_header,
	.on_frame = ctl_frame,
	.on_close = ctl_close,
};

/* Unfinished copies of this job's sources an earlier job left, when its
 * sender can tell which of their blocks are good (JOB_DELTA). */
static void
take_partials(struct transfer *j)
{
	size_t i;

	for (i = 0; i < j->job->nfiles; i++)
		j->partials[i] = -1;
	if (!(j->job->flags & JOB_DELTA))
		return;
	j->npartials = partials_take(j->env->partials, j->job, j->partials,
				     j->goods);
	if (j->npartials > 0)
		log_info("job %s: %zu unfinished cop%s of its files kept from "
			 "before: resuming", j->tag, j->npartials,
			 j->npartials == 1 ? "y" : "ies");
}

/* The largest body the sender's frames may carry: START, REPLACE, and
 * the job's DIGESTS. */
static uint64_t
body_limit(const struct job *job)
{
	uint64_t limit = proto_max_len(MSG_START), digests;

	if (proto_max_len(MSG_REPLACE) > limit)
		limit = proto_max_len(MSG_REPLACE);
	digests = job_blocks(job) <= PROTO_MAX_DIGESTS
			  ? job_blocks(job) * PROTO_DIGEST_LEN : 0;
	return (job->flags & JOB_DELTA) && digests > limit ? digests : limit;
}

static void
describe_job(struct transfer *j)
{
	log_info("job %s from %s (%s): %u files, %llu bytes, %s, %u-byte "
		 "blocks%s%s%s%s", j->tag, j->job->origin, conn_peer(j->ctl),
		 j->job->nfiles, (unsigned long long)j->job->total,
		 sched_alg_name(j->job->alg), j->job->block_size,
		 (j->job->flags & JOB_VERIFY) ? ", verify" : "",
		 (j->job->flags & JOB_FORCE) ? ", force" : "",
		 (j->job->flags & JOB_SPARSE) ? ", sparse" : "",
		 (j->job->flags & JOB_DRY_RUN) ? ", dry run" : "");
}

/* Can this daemon take part over RDMA, on the address the sender reached?
 * Refuses the job if the sender insists and it cannot. */
static int
offer_verbs(struct transfer *j)
{
	struct sockaddr_storage local;
	struct rd_err err = { 0 };

	if (j->job->transport == TRANSPORT_TCP)
		return 0;
	if (j->env->vb == NULL)
		rd_errf(&err, -EPROTONOSUPPORT, "this daemon serves no RDMA "
			"(see its log; --transport tcp avoids it)");
	else if (conn_local(j->ctl, &local) == 0)
		vb_device_for(j->env->vb, &local, &j->dev, &err);
	if (j->dev != NULL)
		return 0;
	if (j->job->transport == TRANSPORT_AUTO) {
		log_info("job %s: over tcp: %s", j->tag, err.msg);
		return 0;
	}
	job_fail(j, err.code ? err.code : -EPROTONOSUPPORT, "%s", err.msg);
	return -1;
}

int
transfer_new(const struct transfer_env *env, struct conn *ctl, struct job *job,
	 struct transfer **out)
{
	struct transfer *j;

	*out = NULL;
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return -ENOMEM;
	j->seen = calloc(job->nfiles + 1, sizeof(*j->seen));
	j->partials = calloc(job->nfiles + 1, sizeof(*j->partials));
	j->goods = calloc(job->nfiles + 1, sizeof(*j->goods));
	j->sums = calloc(job->nfiles + 1, sizeof(*j->sums));
	j->theirs = calloc(job->nfiles + 1, sizeof(*j->theirs));
	if (j->seen == NULL || j->sums == NULL || j->theirs == NULL ||
	    j->partials == NULL || j->goods == NULL) {
		free_seen(j);
		free(j);
		return -ENOMEM;
	}
	j->env = env;
	j->job = job;
	j->ctl = ctl;
	if (job->flags & JOB_TRACE) {
		j->trace = trace_new(TRACE_MAX_SPANS);	/* NULL: no trace */
		j->t_job = trace_now();
	}
	memcpy(j->token, job->token, PROTO_TOKEN_LEN);
	take_partials(j);
	snprintf(j->tag, sizeof(j->tag), "%02x%02x%02x%02x", job->token[0],
		 job->token[1], job->token[2], job->token[3]);
	uv_timer_init(env->loop, &j->reaper);
	j->reaper.data = j;
	transfer_idle_init(j);
	j->handles = 2;		/* reaper and idle */
	conn_set_owner(ctl, &ctl_ops, j);
	conn_set_body_limit(ctl, body_limit(job));
	/* the sender's timeout governs its job from here on */
	conn_keepalive(ctl, 0, job->timeout_ms);
	describe_job(j);
	*out = j;
	if (offer_verbs(j) < 0)
		return 0;	/* refused; the job ends on its own */
	j->work.data = j;
	transfer_setup(j, false);
	return 0;
}

bool
transfer_landed(const struct transfer *j)
{
	return j->landed;
}

void
transfer_token(const struct transfer *j, uint8_t *out)
{
	memcpy(out, j->token, PROTO_TOKEN_LEN);
}

bool
transfer_has_token(const struct transfer *j, const uint8_t *token)
{
	return memcmp(j->token, token, PROTO_TOKEN_LEN) == 0;
}

bool
transfer_resolve(struct transfer *j)
{
	if (!j->landed && j->state != JS_ENDED) {
		log_info("job %s: its sender asked what became of it: "
			 "discarding", j->tag);
		job_fail(j, -ECANCELED, "ended by its sender's question");
	}
	return j->landed;
}

/* A stopped job that was waiting for its sender to close: gone now. */
static void
destroy_stopped(uv_timer_t *t)
{
	job_destroy(t->data);
}

void
transfer_stop(struct transfer *j)
{
	if (j->state != JS_ENDED)
		log_info("job %s: stopped by shutdown", j->tag);
	j->stopping = true;
	if (j->reaped && j->ctl != NULL) {
		/* released, flushing its last words: do not wait for the
		 * sender's close (it may be waiting for us to exit) */
		uv_timer_start(&j->reaper, destroy_stopped, 0, 0);
		return;
	}
	transfer_end(j);
}
