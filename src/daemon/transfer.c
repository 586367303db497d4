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
#include "member/member.h"
#include "util/net.h"
#include "store/store.h"
#include "proto/trace.h"
#include "transport/tcp/tcp.h"
#include "transport/verbs/xv.h"
#include "daemon/partial.h"
#include "daemon/transfer_int.h"

#define TRACE_MAX_SPANS (1u << 20)

static const struct conn_ops ctl_ops;

static void job_end(struct transfer *j);

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
	job_end(j);
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
	free(j->crcs);
	free(j->theirs);
	free(j->digests);
	bset_free(j->need);
	free(j->partials);
	j->partials = NULL;
	free(j->goods);	/* (each given on, or freed, by keep_partials) */
	j->goods = NULL;
	j->seen = NULL;
	j->crcs = j->theirs = NULL;
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

/* Stop the job; resources go on the next loop turn, never from inside
 * the engine or a connection callback. */
static void
job_end(struct transfer *j)
{
	j->state = JS_ENDED;
	if (!j->reaper_armed) {
		j->reaper_armed = true;
		uv_timer_start(&j->reaper, transfer_reap, 0, 0);
	}
}

static void maybe_land(struct transfer *j);

static void
read_back_run(uv_work_t *w)
{
	struct transfer *j = w->data;

	j->disk_crc = store_compute_crc(j->st, NULL);
}

static void
read_back_done(uv_work_t *w, int status)
{
	struct transfer *j = w->data;

	j->work_busy = false;
	if (j->state == JS_ENDED) {	/* aborted meanwhile */
		if (!uv_is_active((uv_handle_t *)&j->reaper))
			transfer_reap(&j->reaper);
		return;
	}
	j->read_back = true;
	maybe_land(j);
}

/* --verify: the crc32 of the temporaries as they are, every block in,
 * read in the thread pool (it reads the whole copy) and compared before
 * anything is renamed: what lands is what is checked, not the blocks as
 * they arrived (a temporary changed since then must not pass). */
static void
read_back(struct transfer *j)
{
	j->work_busy = uv_queue_work(j->env->loop, &j->work, read_back_run,
				     read_back_done) == 0;
	if (!j->work_busy)
		job_fail(j, -ENOMEM, "cannot queue the reading of the copy");
}

static void
maybe_land(struct transfer *j)
{
	struct rd_err err = { 0 };
	uint64_t silence, t0;
	uint32_t crc = 0;

	if (!j->complete || j->landed || j->state != JS_RUNNING)
		return;
	if (!j->go_received)
		return;		/* the sender's go: its sources did not change */
	if (j->work_busy)
		return;		/* its copy being read back (--verify) */
	if (!j->read_back && j->trace != NULL && j->t_complete != 0)
		trace_add(j->trace, TR_GO, j->t_complete, trace_now(),
			  PROTO_NO_PEER, 0);	/* until the go */
	/* The sender gives a member up once nothing came from it for the
	 * job's timeout.  A member that was silent for nearly that long at
	 * any time of the job (frozen, starved or cut off) must not land:
	 * its sender may have given up on it then, or will before our
	 * COMPLETE can reach it.  Keepalives go out at most a quarter of
	 * the timeout apart: a member that runs never comes near. */
	if (conn_lease_lost(j->ctl, j->job->timeout_ms, &silence)) {
		job_fail(j, -ETIMEDOUT, "this daemon could not speak to its "
			 "sender for %llu ms (frozen, starved or cut off), "
			 "which may have given up on it: not landing",
			 (unsigned long long)silence);
		return;
	}
	if ((j->job->flags & JOB_VERIFY) && !j->read_back) {
		read_back(j);	/* then here again */
		return;
	}
	if (j->job->flags & JOB_VERIFY) {
		crc = j->disk_crc;
		if (crc != j->crc_expected) {
			job_fail(j, -EIO, "checksum mismatch: the copy on disk "
				 "has %08x, the sender's %08x", crc,
				 j->crc_expected);
			return;
		}
	}
	t0 = trace_now();
	if (store_commit(j->st, &err) < 0) {
		job_fail(j, err.code, "%s", err.msg);
		return;
	}
	/* the sender first: between the renames and its word the report
	 * could be wrong, were this daemon stopped or killed */
	send_frame(j, MSG_COMPLETE, crc, NULL);
	trace_add(j->trace, TR_COMMIT, t0, trace_now(), PROTO_NO_PEER, 0);
	j->landed = true;
	log_info("job %s: complete, %llu bytes in place", j->tag,
		 (unsigned long long)store_total(j->st));
	if (j->eng_done)
		job_end(j);
}

/* ---------------------------------------------------------------------
 * Engine
 */

static int
blocks_iov(void *ctx, uint64_t block, struct iovec *iov, int max)
{
	return store_iov(((struct transfer *)ctx)->st, block, iov, max);
}

/* How fast blocks come in, for PROGRESS: eng_block_time_us (0: not
 * known), or PROTO_BT_SHARED if other transfers run here too: their
 * blocks share our link, so ours come in slower for a reason that moving
 * us in the group would not cure (the sender then judges nobody in this
 * push, whatever it is told later). */
static uint32_t
block_time_us(const struct transfer *j)
{
	uint64_t bt;

	if (j->env->jobs_running != NULL && *j->env->jobs_running > 1)
		return PROTO_BT_SHARED;
	bt = eng_block_time_us(j->eng);
	return bt < PROTO_BT_SHARED ? (uint32_t)bt : PROTO_BT_SHARED - 1;
}

/* PROGRESS: blocks held, and block time bt (0: not known yet). */
static void
send_progress(struct transfer *j, uint32_t bt)
{
	j->told_bt = bt > 0;
	j->progress_at = uv_now(j->env->loop);
	transfer_send(j, MSG_PROGRESS, bt, eng_held(j->eng), NULL);
}

/* Tell the sender how far we are (blocks held) and how fast blocks come
 * in (block_time_us; at once when first known), every
 * proto_progress_every_ms.  Not while a frame we sent the sender is
 * unacknowledged (the next block asks again, and a first block time
 * still held at the end goes then: tell_held_block_time): its ACKs wait
 * behind the data on its link, and a second frame in flight has TCP
 * probe the first after two round trips of the path when idle, a
 * needless retransmission by most members of a group at once
 * (docs/performance.md, its constants). */
static void
maybe_progress(struct transfer *j)
{
	uint64_t now = uv_now(j->env->loop);
	uint32_t bt = block_time_us(j);
	bool due = now - j->progress_at >=
		   proto_progress_every_ms(j->ro->n, j->job->block_size, bt);

	if (!due && (j->told_bt || bt == 0))
		return;
	if (conn_all_acked(j->ctl))
		send_progress(j, bt);
}

static int
blocks_arrived(void *ctx, uint64_t block)
{
	struct transfer *j = ctx;
	int rc = store_arrived(j->st, block);

	if (rc == 0)
		maybe_progress(j);
	return rc;
}

/* All blocks are in: a first block time held back by maybe_progress (a
 * frame was unacknowledged at every arrival since it was known, as a
 * short push on a slow machine can be) goes now, or the sender would
 * never learn it.  Once: the COMPLETE that follows makes two frames in
 * flight at most, as at any job's end. */
static void
tell_held_block_time(struct transfer *j)
{
	uint32_t bt = block_time_us(j);

	if (!j->told_bt && bt > 0)
		send_progress(j, bt);
}

static void
on_complete(void *ctx)
{
	struct transfer *j = ctx;

	j->complete = true;
	tell_held_block_time(j);
	if (j->trace != NULL)
		j->t_complete = trace_now();
	maybe_land(j);
}

/* Over verbs: how many block bytes were copied on their way (none when
 * the mappings could be registered). */
static void
log_copies(const struct transfer *j)
{
	struct xp_stats s;

	if (j->eng == NULL || !xp_stats(eng_xport(j->eng), &s))
		return;
	log_info("job %s: %llu bytes received in place, %llu copied from "
		 "bounce buffers; %llu sent in place, %llu copied to send "
		 "buffers", j->tag, (unsigned long long)s.recv_placed,
		 (unsigned long long)s.recv_copied,
		 (unsigned long long)s.send_direct,
		 (unsigned long long)s.send_copied);
}

/* Blocks could not be written: no space (or quota) where the job lands,
 * which nothing reserved (-S) or a file system that took the
 * reservation back.  Said with the place, as the user named it. */
static void
fail_no_space(struct transfer *j, int status)
{
	const char *first = "/", *slash;
	uint32_t i;
	int len;

	for (i = 0; i < j->job->nfiles && first[1] == '\0'; i++)
		if (j->job->files[i].type == JF_FILE &&
		    j->job->files[i].size > 0)
			first = j->job->files[i].path;	/* its directory */
	slash = strrchr(first, '/');
	len = slash != NULL && slash > first ? (int)(slash - first) : 1;

	job_fail(j, status, "%.*s: %s as the blocks landed (the job's "
		 "%llu bytes%s)", len, first, strerror(-status),
		 (unsigned long long)j->job->total,
		 (j->job->flags & JOB_SPARSE) ? "; -S reserves no space up "
		 "front" : "");
}

static void
on_done(void *ctx, int status, uint32_t peer)
{
	struct transfer *j = ctx;
	char addr[NET_ADDRSTRLEN] = "?";

	j->eng_done = true;
	log_copies(j);
	if (status == 0) {
		if (j->landed)
			job_end(j);
		return;
	}
	if (peer < j->ro->n && roster_peer(j->ro, peer) != NULL)
		net_format(&roster_peer(j->ro, peer)->addr, addr, sizeof(addr));
	if (status == ENG_NEVER_CONNECTED)
		transfer_fail(j, status, peer, "rank %u (%s) never connected "
			      "(waited %u ms)", peer,
			      peer == 0 ? "the sender" : addr,
			      j->env->connect_timeout_ms + j->job->timeout_ms);
	else if (peer == ENG_NO_PEER && (status == -ENOSPC ||
					 status == -EDQUOT))
		fail_no_space(j, status);
	else if (peer == ENG_NO_PEER)
		job_fail(j, status, "%s", eng_strerror(status));
	else
		transfer_fail(j, status, peer, "lost connection to rank %u "
			      "(%s): %s", peer, peer == 0 ? "the sender" : addr,
			      eng_strerror(status));
}

/* This member's engine, over the group's transport (member.h). */
/* Blocks land in and leave from the temporaries' mappings: over TCP
 * through the files (xp_reg's fd: splice and sendfile), over verbs
 * straight from and into the registered memory (xfer.c). */
static int
register_temporaries(void *ctx, struct xp *xp, struct rd_err *err)
{
	struct transfer *j = ctx;
	size_t i, len;
	void *map;
	int rc = 0, fd;

	for (i = 0; rc == 0 && i < store_nfiles(j->st); i++) {
		store_mapping(j->st, i, &map, &len, &fd);
		rc = xp_reg(xp, map, len, true, fd, 0);
	}
	return rc < 0 ? rd_errf(err, rc, "%s", xp_errmsg(xp) != NULL ?
				xp_errmsg(xp) : strerror(-rc)) : 0;
}

static int
start_engine(struct transfer *j, struct rd_err *err)
{
	struct member_cfg mc = {
		.transport = j->ro->transport, .peers = j->ro->peers,
		.npeers = j->ro->npeers, .bind = &j->bind,
		.connect_timeout_ms = j->env->connect_timeout_ms,
		.timeout_ms = j->job->timeout_ms,
		.vb = j->env->vb, .dev = j->dev,
		.block_size = j->job->block_size,
		.reg = register_temporaries,
	};
	struct eng_cfg ec = {
		.loop = j->env->loop, .alg = j->job->alg, .n = j->ro->n,
		.rank = j->ro->rank, .blocks = store_blocks(j->st),
		.racks = j->ro->racks, .nracks = j->ro->nracks,
		.window = j->job->window, .rate = j->job->bwlimit,
		.io = { blocks_iov, blocks_arrived, j },
		.complete = on_complete, .done = on_done, .ctx = j,
		.trace = j->trace,
	};
	int rc;

	memcpy(mc.token, j->job->token, PROTO_TOKEN_LEN);
	rc = member_start(&mc, &ec, &j->eng, err);
	return rc == 0 ? transfer_adopt_parked(j) : rc;
}

/* A schedule across racks costs this member, as its engine is made, a
 * table worked out in time and memory that grow as blocks x members
 * (hybrid.h): refused, for good, when --max-blocks does not allow it.
 * The temporaries go with the job. */
static bool
refuse_costly_racks(struct transfer *j)
{
	char why[PROTO_MAX_TEXT];

	if (j->ro->nracks < 2 || j->job->alg != SCHED_BINOMIAL ||
	    !transfer_over_cap(j->job, j->ro->n, j->env->max_blocks, why,
			   sizeof(why)))
		return false;
	log_info("job %s: refused: %s", j->tag, why);
	send_frame(j, MSG_REFUSE, EFBIG, why);
	job_end(j);
	return true;
}

/* START's blocks carried: the job's, and every block we lack among them
 * (the others were filled from what was there); the store carries them
 * alone.  0, or -EPROTO (a sender that would leave us without a block),
 * -ENOMEM. */
static int
take_map(struct transfer *j)
{
	const struct bset *map = j->ro->map;
	uint32_t runs;

	if (map == NULL)
		return 0;
	runs = bset_nruns(map);
	if (runs > 0 && bset_run_at(map, runs - 1).first +
			bset_run_at(map, runs - 1).count >
			store_stream_blocks(j->st))
		return -EPROTO;
	if (j->need == NULL ? bset_count(map) != store_stream_blocks(j->st)
			    : !bset_covers(map, j->need))
		return -EPROTO;
	return store_set_map(j->st, map);
}

/* DIGESTS: kept for the set-up REPLACE starts; one per stream block. */
static int
on_digests(struct transfer *j, const struct frame *f, const uint8_t *body)
{
	if (!(j->job->flags & JOB_DELTA) || j->digests != NULL ||
	    f->len != job_blocks(j->job) * PROTO_DIGEST_LEN)
		return -EPROTO;
	j->digests = malloc(f->len ? f->len : 1);
	if (j->digests == NULL)
		return -ENOMEM;
	memcpy(j->digests, body, f->len);
	return 0;
}

static int
on_start(struct transfer *j, const struct frame *f, const uint8_t *body)
{
	struct rd_err err = { 0 };
	int rc;

	rc = roster_decode(body, f->len, &j->ro, &err);
	if (rc == 0)
		rc = conn_local(j->ctl, &j->bind);
	if (rc == 0)
		rc = take_map(j);
	if (rc < 0)
		return rc;
	if (refuse_costly_racks(j))
		return 0;
	j->state = JS_RUNNING;
	trace_add(j->trace, TR_BOOT, j->t_job, trace_now(), PROTO_NO_PEER, 0);
	log_info("job %s: rank %u of %u, over %s", j->tag, j->ro->rank,
		 j->ro->n, proto_transport_name(j->ro->transport));
	rc = start_engine(j, &err);
	if (rc < 0)
		job_fail(j, rc, "cannot start: %s",
			 err.code ? err.msg : strerror(-rc));
	return 0;
}

/* ---------------------------------------------------------------------
 * Control connection
 */

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
	job_end(j);
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
		return on_start(j, f, body);
	case MSG_CRC:
		j->go_received = true;
		j->crc_expected = (uint32_t)f->val;
		maybe_land(j);
		return 0;
	case MSG_ABORT:
		on_abort(j, f, body);
		return 0;
	case MSG_DIGESTS:
		return on_digests(j, f, body);
	case MSG_REPLACE:	/* the sources' crcs: settle, set up */
		if (replace_decode(body, f->len, j->job->nfiles,
				   j->theirs) < 0)
			return -EPROTO;
		return transfer_setup(j, true);
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
	job_end(j);
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
	j->crcs = calloc(job->nfiles + 1, sizeof(*j->crcs));
	j->theirs = calloc(job->nfiles + 1, sizeof(*j->theirs));
	if (j->seen == NULL || j->crcs == NULL || j->theirs == NULL ||
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
	job_end(j);
}
