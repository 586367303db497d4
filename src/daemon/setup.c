/* SPDX-License-Identifier: MIT */
/*
 * setup - a transfer's set-up on the daemon (see transfer_int.h): in the
 * thread pool, off the loop, the job is probed (is it there already?),
 * checked (a dry run) or created (temporaries made, space reserved);
 * then HAVE, ACCEPT or REFUSE.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "store/store.h"
#include "proto/trace.h"
#include "daemon/transfer_int.h"

/* The daemon's policy for this job; what was seen is the caller's. */
static void
policy(const struct transfer *j, struct dest_policy *pol)
{
	*pol = (struct dest_policy){
		.roots = j->env->roots, .nroots = j->env->nroots,
		.prefix = j->env->prefix,
		.force = (j->job->flags & JOB_FORCE) != 0,
		.allow_setid = j->env->allow_setid,
		.set_owner = j->env->set_owner,
		.uid = j->env->uid, .gid = j->env->gid,
		.owner_of_root = j->env->owner_of_root,
		.keep_owners = j->env->keep_owners,
		.state_dir = j->env->state_dir,
		.reserved = j->env->state_dir,
		.sparse = (j->job->flags & JOB_SPARSE) != 0,
	};
}

/* The sender's sums came (REPLACE): each file that may be identical
 * is, and is kept, or differs. */
static void
settle(struct transfer *j)
{
	uint32_t i;

	for (i = 0; i < j->job->nfiles; i++)
		if (j->seen[i] == DS_CANDIDATE)
			j->seen[i] = memcmp(&j->sums[i], &j->theirs[i],
					    sizeof(j->sums[i])) == 0
					     ? DS_SAME : DS_DIFFERENT;
}

/* May entry i's old file serve a delta (only where --force lets it be
 * replaced), or an unfinished copy an earlier job left?  Asked on the
 * first look, before the sender's digests came. */
static bool
may_delta(const struct transfer *j, uint32_t i)
{
	if (j->settle || !(j->job->flags & JOB_DELTA))
		return false;
	return (j->seen[i] == DS_OLD_FILE && (j->job->flags & JOB_FORCE)) ||
	       (j->partials[i] >= 0 && j->seen[i] != DS_SAME);
}

/* Could the blocks of what was seen serve, with digests?  first: at the
 * first look, before the sums settled which files are identical. */
static bool
wants_digests(const struct transfer *j, bool first)
{
	uint32_t i;

	if (!(j->job->flags & JOB_DELTA) || j->digests != NULL)
		return false;
	for (i = 0; i < j->job->nfiles; i++) {
		if (first && j->seen[i] != DS_CANDIDATE && may_delta(j, i))
			return true;
		if (!first && j->seen[i] != DS_SAME && j->job->files[i].size &&
		    ((j->seen[i] == DS_DIFFERENT &&
		      (j->job->flags & JOB_FORCE)) || may_delta(j, i)))
			return true;
	}
	return false;
}

bool
transfer_settle_wants_digests(struct transfer *j)
{
	settle(j);
	return wants_digests(j, false);
}

/* What the entries seen make of the job: a file or link that differs,
 * refused without --force, named (the one that really differs, not the
 * job's first); files to compare first, or whose blocks may serve a
 * delta (SETUP_ASK); all identical (SETUP_SAME); else something to make
 * (SETUP_MADE). */
static int
verdict(struct transfer *j)
{
	bool ask = false, same = true;
	uint32_t i;

	for (i = 0; i < j->job->nfiles; i++) {
		if ((j->seen[i] == DS_DIFFERENT || j->seen[i] == DS_OLD_FILE) &&
		    !(j->job->flags & JOB_FORCE))
			return rd_errf(&j->work_err, -EEXIST, "%s exists and "
				       "differs from the source (--force "
				       "replaces it)", j->job->files[i].path);
		ask = ask || j->seen[i] == DS_CANDIDATE || may_delta(j, i);
		same = same && j->seen[i] == DS_SAME;
	}
	return ask ? SETUP_ASK : same ? SETUP_SAME : SETUP_MADE;
}

/* Grow an array of n entries of `size` bytes to m, zeroed: 0 or -ENOMEM
 * (the old array is kept). */
static int
grow(void **arr, size_t size, size_t n, size_t m)
{
	void *p = realloc(*arr, (m + 1) * size);

	if (p == NULL)
		return -ENOMEM;
	memset((char *)p + n * size, 0, (m + 1 - n) * size);
	*arr = p;
	return 0;
}

/* The unfinished copies kept for the first n entries given up (their
 * space freed).  Were there any? */
static bool
drop_partials(struct transfer *j, size_t n)
{
	bool any = j->npartials > 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (j->partials[i] >= 0)
			close(j->partials[i]);
		j->partials[i] = -1;
		bset_free(j->goods[i]);
		j->goods[i] = NULL;
	}
	j->npartials = 0;
	return any;
}

/* The temporaries made; where the file system has no room for them
 * beside the unfinished copies kept, those are given up first (they
 * hold the space a push without them would have): resuming saves
 * bytes on the wire, never fails a push that would fit. */
static int
make_temporaries(struct transfer *j, const struct dest_policy *pol)
{
	int rc = store_create(j->job, pol, &j->st, &j->work_err);

	if ((rc == -ENOSPC || rc == -EDQUOT) &&
	    drop_partials(j, j->job->nfiles)) {
		j->partials_dropped = true;	/* said by setup_done */
		memset(&j->work_err, 0, sizeof(j->work_err));
		rc = store_create(j->job, pol, &j->st, &j->work_err);
	}
	return rc;
}

/* The unfinished copies kept, taken for the sender's n entries, moved
 * up by k: the k parents that joined the job go before them. */
static void
shift_partials(struct transfer *j, size_t n, size_t k)
{
	size_t i;

	memmove(j->partials + k, j->partials, n * sizeof(*j->partials));
	memmove(j->goods + k, j->goods, n * sizeof(*j->goods));
	for (i = 0; i < k; i++) {
		j->partials[i] = -1;
		j->goods[i] = NULL;
	}
}

/* -d DIR/'s missing parents join the job (JOB_PARENTS), once, before the
 * first look, ahead of the sender's entries (j->parents of them), and
 * the arrays per entry grow with it; the unfinished copies kept for the
 * sender's entries move with them (a push to a new directory, broken
 * before anything landed there, resumes as well). */
static int
add_parents(struct transfer *j, const struct dest_policy *pol)
{
	size_t before = j->job->nfiles, i;
	int rc = dest_add_parents(j->job, pol, &j->work_err);

	if (rc < 0 || j->job->nfiles == before)
		return rc;
	rc = grow((void **)&j->seen, sizeof(*j->seen), before, j->job->nfiles);
	if (rc == 0)
		rc = grow((void **)&j->sums, sizeof(*j->sums), before,
			  j->job->nfiles);
	if (rc == 0)
		rc = grow((void **)&j->theirs, sizeof(*j->theirs), before,
			  j->job->nfiles);
	if (rc == 0)
		rc = grow((void **)&j->partials, sizeof(*j->partials), before,
			  j->job->nfiles);
	for (i = before; rc == 0 && i <= j->job->nfiles; i++)
		j->partials[i] = -1;	/* not fd 0 */
	if (rc == 0)
		rc = grow((void **)&j->goods, sizeof(*j->goods), before,
			  j->job->nfiles);
	if (rc == 0) {
		j->parents = j->job->nfiles - before;
		shift_partials(j, before, j->parents);
	}
	return rc;
}

/* A dry run's make_temporaries: the space the unfinished copies kept
 * hold, file system by file system, which a real run gives up when the
 * job has no room beside them.  0 or -ENOMEM. */
static int
partials_room(const struct transfer *j, struct dest_room **out, size_t *n)
{
	struct dest_room *room;
	struct stat sb;
	size_t i, k;

	*n = 0;
	*out = room = calloc(j->job->nfiles + 1, sizeof(*room));
	if (room == NULL)
		return -ENOMEM;
	for (i = 0; i < j->job->nfiles; i++) {
		if (j->partials[i] < 0 || fstat(j->partials[i], &sb) < 0)
			continue;
		for (k = 0; k < *n && room[k].dev != sb.st_dev; k++)
			;
		room[k].dev = sb.st_dev;
		room[k].bytes += (uint64_t)sb.st_blocks * 512;
		*n += k == *n;
	}
	return 0;
}

/* A dry run checks what a real run would, makes nothing, and says what
 * the host would lack.  Where the job has no room beside the unfinished
 * copies kept, a real run gives those up (make_temporaries): so does the
 * prediction, without giving them up. */
static int
dry_set_up(struct transfer *j, struct dest_policy *pol)
{
	struct dest_room *room = NULL;
	int rc = dest_check(j->job, pol, &j->work_err), *none = NULL;
	size_t i;

	if ((rc == -ENOSPC || rc == -EDQUOT) && j->npartials > 0) {
		rc = partials_room(j, &room, &pol->nfreeable);
		none = malloc((j->job->nfiles + 1) * sizeof(*none));
		if (rc == 0 && none == NULL)
			rc = -ENOMEM;
		if (rc == 0) {
			pol->freeable = room;
			memset(&j->work_err, 0, sizeof(j->work_err));
			rc = dest_check(j->job, pol, &j->work_err);
			j->partials_dropped = rc == 0;
		}
		for (i = 0; none != NULL && i <= j->job->nfiles; i++)
			none[i] = -1;
	}
	if (rc == 0 && j->digests != NULL)	/* what it would lack */
		rc = store_predict(j->job, pol, j->digests,
				   j->partials_dropped ? none : j->partials,
				   &j->need, &j->resumed, &j->work_err);
	pol->freeable = NULL;
	pol->nfreeable = 0;
	free(room);
	free(none);
	return rc;
}

/* Look (or settle what was seen), then keep, check or make. */
static int
set_up(struct transfer *j)
{
	struct dest_policy pol;
	int rc;

	policy(j, &pol);
	if (j->fill == FILL_COMPARE) {	/* both digests in: compare */
		rc = store_fill_compare(j->st, j->digests, j->mine,
					j->partials, j->goods, &j->need,
					&j->work_err);
		return rc < 0 ? rc : SETUP_MADE;
	}
	if (j->settle)
		settle(j);
	else if ((rc = add_parents(j, &pol)) < 0 ||
		 (rc = store_look(j->job, &pol, j->seen, j->sums,
				  &j->work_err)) < 0)
		return rc;
	rc = verdict(j);
	if (rc == SETUP_SAME && !(j->job->flags & JOB_DRY_RUN) &&
	    dest_settle(j->job, &pol, &j->work_err) < 0)	/* -p's times */
		return j->work_err.code;
	if (rc != SETUP_MADE)
		return rc;
	pol.seen = j->seen;
	if (j->job->flags & JOB_DRY_RUN)
		return dry_set_up(j, &pol);
	rc = make_temporaries(j, &pol);
	if (rc == 0 && (j->job->flags & JOB_SPARSE))
		store_keep_holes(j->st);
	if (rc == 0 && j->fill == FILL_LOCAL)	/* j->digests not read */
		rc = store_fill_local(j->st, j->job, &pol, &j->mine,
				      &j->work_err);
	else if (rc == 0 && j->digests != NULL)
		rc = store_fill(j->st, j->job, &pol, j->digests, j->partials,
				j->goods,
				&j->need,
				&j->work_err);
	return rc;
}

static void
setup_run(uv_work_t *w)
{
	struct transfer *j = w->data;

	j->t_setup0 = trace_now();
	j->work_rc = set_up(j);
	j->t_setup1 = trace_now();
}

/* ACCEPT, with the blocks we lack if we compared them. */
static void
send_accept(struct transfer *j)
{
	uint64_t port = j->dev != NULL ? j->env->rdma_port : 0;
	struct wbuf w;

	if (j->need == NULL) {
		transfer_send(j, MSG_ACCEPT, PROTO_NO_PEER, port, NULL);
		return;
	}
	bset_coarsen(j->need, PROTO_MAX_RUNS);
	log_info("job %s: %llu of %llu blocks held already, %llu to come",
		 j->tag, (unsigned long long)(job_blocks(j->job) -
					      bset_count(j->need)),
		 (unsigned long long)job_blocks(j->job),
		 (unsigned long long)bset_count(j->need));
	wbuf_init(&w);
	bset_encode(j->need, &w);
	wput_u64(&w, j->st != NULL ? store_resumed_bytes(j->st) : j->resumed);
	if (w.err != 0)
		job_fail(j, -ENOMEM, "out of memory");
	else
		transfer_send_body(j, MSG_ACCEPT, PROTO_NO_PEER, port, w.data,
				   w.len);
	wbuf_free(&w);
}

static void
setup_done(uv_work_t *w, int status)
{
	struct transfer *j = w->data;

	j->work_busy = false;
	transfer_idle_progress(j);	/* the sender's time starts now */
	conn_keepalive_tune(j->ctl, 0, j->job->timeout_ms);
	if (j->t_setup1 != 0)
		trace_add(j->trace, TR_SETUP, j->t_setup0, j->t_setup1,
			  PROTO_NO_PEER, 0);
	if (j->state == JS_ENDED) {
		if (!uv_is_active((uv_handle_t *)&j->reaper))
			transfer_reap(&j->reaper);
		return;
	}
	if (j->partials_dropped && (j->job->flags & JOB_DRY_RUN))
		log_info("job %s: a dry run: no room for new copies beside the "
			 "unfinished ones kept: a real run would give those "
			 "up, and every block would come again", j->tag);
	else if (j->partials_dropped)
		log_info("job %s: no room for new copies beside the unfinished "
			 "ones kept: those given up, every block comes again",
			 j->tag);
	j->partials_dropped = false;
	if (j->work_rc < 0) {
		job_fail(j, j->work_rc, "%s", j->work_err.code
				 ? j->work_err.msg : strerror(-j->work_rc));
		return;
	}
	if (j->fill == FILL_LOCAL && j->work_rc == SETUP_MADE) {
		j->fill = FILL_WAITING;		/* our blocks digested */
		j->state = JS_HAVE;
		if (j->digests != NULL)
			transfer_digests_came(j);
		return;
	}
	if (j->work_rc == SETUP_ASK || j->work_rc == SETUP_SAME) {
		j->state = j->work_rc == SETUP_ASK ? JS_HAVE : JS_SAME;
		log_info("job %s: %s", j->tag, j->work_rc == SETUP_ASK
			 ? "files that may be identical are there: comparing"
			 : "every entry is there already, identical");
		j->asked_digests = j->work_rc == SETUP_ASK &&
				   wants_digests(j, true);
		transfer_send(j, MSG_HAVE, j->work_rc == SETUP_ASK ? HAVE_ASK
								   : HAVE_SAME,
			      j->asked_digests ? HAVE_WANT_DIGESTS : 0, NULL);
		return;
	}
	j->state = (j->job->flags & JOB_DRY_RUN) ? JS_DRY : JS_READY;
	if (j->state == JS_DRY)
		log_info("job %s: dry run: every check passed", j->tag);
	if (j->trace != NULL)
		j->t_accept = trace_now();
	send_accept(j);
}

int
transfer_prefill(struct transfer *j)
{
	if (j->job->flags & JOB_DRY_RUN)
		return 0;	/* predicts from DIGESTS (transfer_digests_came) */
	j->fill = FILL_LOCAL;
	return transfer_setup(j, true);
}

void
transfer_digests_came(struct transfer *j)
{
	if (j->fill == FILL_WHOLE)
		transfer_setup(j, true);	/* a dry run */
	else if (j->fill == FILL_WAITING) {
		j->fill = FILL_COMPARE;
		transfer_setup(j, true);
	}
}

int
transfer_setup(struct transfer *j, bool settle)
{
	/* keepalives often enough for the sender to tell a set-up that
	 * takes its time from a hung daemon (PROTO_SETUP_NOP_MS) */
	conn_keepalive_tune(j->ctl, PROTO_SETUP_NOP_MS, j->job->timeout_ms);
	j->state = JS_SETUP;
	j->settle = settle;
	j->work_busy = uv_queue_work(j->env->loop, &j->work, setup_run,
				     setup_done) == 0;
	if (!j->work_busy)
		job_fail(j, -ENOMEM, "cannot queue the job");
	return 0;
}
