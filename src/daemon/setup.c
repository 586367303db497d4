/* SPDX-License-Identifier: MIT */
/*
 * setup - a transfer's set-up on the daemon (see transfer_int.h): in the
 * thread pool, off the loop, the job is probed (is it there already?),
 * checked (a dry run) or created (temporaries made, space reserved);
 * then HAVE, ACCEPT or REFUSE.
 */
#include <errno.h>
#include <string.h>

#include "util/log.h"
#include "store/store.h"
#include "proto/trace.h"
#include "daemon/transfer_int.h"

static void
setup_run(uv_work_t *w)
{
	struct transfer *j = w->data;
	struct dest_policy pol = {
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

	j->t_setup0 = trace_now();
	if (!j->replace) {
		j->work_rc = store_probe(j->job, &pol, &j->have_crc,
					 &j->have_by_times);
		j->t_setup1 = trace_now();
		if (j->work_rc != 0)
			return;		/* there already, or no memory */
	}
	pol.force = pol.force || j->replace;
	if (j->job->flags & JOB_DRY_RUN) {
		j->work_rc = dest_check(j->job, &pol, &j->work_err);
		j->t_setup1 = trace_now();
		return;
	}
	j->work_rc = store_create(j->job, &pol, &j->st, &j->work_err);
	if (j->work_rc == 0 && (j->job->flags & JOB_SPARSE))
		store_keep_holes(j->st);
	j->t_setup1 = trace_now();
}

static void
setup_done(uv_work_t *w, int status)
{
	struct transfer *j = w->data;

	j->work_busy = false;
	transfer_idle_progress(j);	/* the sender's time starts now */
	if (j->t_setup1 != 0)
		trace_add(j->trace, TR_SETUP, j->t_setup0, j->t_setup1,
			  PROTO_NO_PEER, 0);
	if (j->state == JS_ENDED) {
		if (!uv_is_active((uv_handle_t *)&j->reaper))
			transfer_reap(&j->reaper);
		return;
	}
	if (j->work_rc < 0) {
		job_fail(j, j->work_rc, "%s", j->work_err.code
				 ? j->work_err.msg : strerror(-j->work_rc));
		return;
	}
	if (j->work_rc == 1) {
		j->state = JS_HAVE;
		log_info("job %s: every entry is there already%s", j->tag,
			 j->have_by_times ? " (sizes, modes and times agree)"
					  : "");
		transfer_send(j, MSG_HAVE, j->have_by_times ? HAVE_BY_TIMES
							    : 0,
			      j->have_crc, NULL);
		return;
	}
	j->state = (j->job->flags & JOB_DRY_RUN) ? JS_DRY : JS_READY;
	if (j->state == JS_DRY)
		log_info("job %s: dry run: every check passed", j->tag);
	if (j->trace != NULL)
		j->t_accept = trace_now();
	transfer_send(j, MSG_ACCEPT, PROTO_NO_PEER,
		      j->dev != NULL ? j->env->rdma_port : 0, NULL);
}

int
transfer_setup(struct transfer *j, bool replace)
{
	j->state = JS_SETUP;
	j->replace = replace;
	j->work_busy = uv_queue_work(j->env->loop, &j->work, setup_run,
				     setup_done) == 0;
	if (!j->work_busy)
		job_fail(j, -ENOMEM, "cannot queue the job");
	return 0;
}
