/* SPDX-License-Identifier: MIT */
/*
 * run - a transfer running on its daemon (see transfer_int.h): START
 * taken, its engine started over the group's transport, the blocks coming
 * in and PROGRESS told; once every block is in and the sender's go came,
 * its copy read back (--verify) and landed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "util/log.h"
#include "member/member.h"
#include "util/net.h"
#include "store/store.h"
#include "proto/trace.h"
#include "daemon/transfer_int.h"

/* ---------------------------------------------------------------------
 * --verify and landing
 */

static void
read_back_run(uv_work_t *w)
{
	struct transfer *j = w->data;

	j->disk_crc = store_compute_crc(j->st);
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
	transfer_maybe_land(j);
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

void
transfer_maybe_land(struct transfer *j)
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
	transfer_send(j, MSG_COMPLETE, PROTO_NO_PEER, crc, NULL);
	trace_add(j->trace, TR_COMMIT, t0, trace_now(), PROTO_NO_PEER, 0);
	j->landed = true;
	log_info("job %s: complete, %llu bytes in place", j->tag,
		 (unsigned long long)store_total(j->st));
	if (j->eng_done)
		transfer_end(j);
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

/* PROGRESS: blocks received (those we had count apart: the sender knows
 * them from ACCEPT), and block time bt (0: not known yet). */
static void
send_progress(struct transfer *j, uint32_t bt)
{
	j->told_bt = bt > 0;
	j->progress_at = uv_now(j->env->loop);
	transfer_send(j, MSG_PROGRESS, bt, eng_received(j->eng), NULL);
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
	transfer_maybe_land(j);
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
			transfer_end(j);
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

/* The engine's cfg.lacks: what neighbour `rank` lacks, as START says,
 * in j->bits (valid until the next call), or NULL: all. */
static const uint8_t *
peer_lacks(void *ctx, uint32_t rank)
{
	struct transfer *j = ctx;
	const struct roster_peer *pr = roster_peer(j->ro, rank);
	uint64_t k = store_blocks(j->st);

	if (pr == NULL || pr->lacks == NULL)
		return NULL;
	memset(j->bits, 0, k / 8 + 1);
	bset_mask(pr->lacks, j->ro->map, k, j->bits);
	return j->bits;
}

/* The engine's cfg.had: the blocks carried that START says we do not
 * lack (take_map checked that we hold them), in `had`. */
static void
blocks_had(struct transfer *j, uint8_t *had)
{
	uint64_t k = store_blocks(j->st), b;

	memset(had, 0, k / 8 + 1);
	bset_mask(j->ro->lacks, j->ro->map, k, had);
	for (b = 0; b < k; b++)
		had[b / 8] ^= (uint8_t)(1u << (b % 8));
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
		.link_window = (j->job->flags & JOB_LINK_WINDOW) != 0,
		.io = { blocks_iov, blocks_arrived, j },
		.complete = on_complete, .done = on_done, .ctx = j,
		.trace = j->trace,
	};
	uint8_t *had = NULL;
	int rc;

	if (j->ro->has_lacks) {
		had = malloc(store_blocks(j->st) / 8 + 1);
		j->bits = malloc(store_blocks(j->st) / 8 + 1);
		if (had == NULL || j->bits == NULL) {
			free(had);
			free(j->bits);
			j->bits = NULL;
			return -ENOMEM;
		}
		blocks_had(j, had);
		ec.had = had;
		ec.lacks = peer_lacks;
	}
	memcpy(mc.token, j->job->token, PROTO_TOKEN_LEN);
	rc = member_start(&mc, &ec, &j->eng, err);
	free(had);	/* the engine copied them */
	free(j->bits);
	j->bits = NULL;
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
	transfer_send(j, MSG_REFUSE, PROTO_NO_PEER, EFBIG, why);
	transfer_end(j);
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

/* START's word of what we lack, if any: every block we lack among
 * it, or the sender's neighbours would leave us without one.  0 or
 * -EPROTO. */
static int
check_lacks(const struct transfer *j)
{
	if (!j->ro->has_lacks || j->ro->lacks == NULL)
		return 0;	/* we are sent every block carried */
	return j->need != NULL && bset_covers(j->ro->lacks, j->need)
		       ? 0 : -EPROTO;
}

int
transfer_start(struct transfer *j, const struct frame *f, const uint8_t *body)
{
	struct rd_err err = { 0 };
	int rc;

	rc = roster_decode(body, f->len, &j->ro, &err);
	if (rc == 0)
		rc = conn_local(j->ctl, &j->bind);
	if (rc == 0)
		rc = take_map(j);
	if (rc == 0)
		rc = check_lacks(j);
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
