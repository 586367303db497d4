/* SPDX-License-Identifier: MIT */
/*
 * setup - a transfer set up in the daemon's thread pool (see
 * transfer_int.h): the parents of -d DIR/ added to its entries, which
 * are checked against what is there, created as temporaries, or, in a dry
 * run, only checked.
 */
#include "daemon/transfer.h"

#include "store/store.h"
#include "proto/trace.h"
#include "daemon/transfer_int.h"

void
transfer_setup_run(uv_work_t *w)
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
	j->work_rc = dest_add_parents(j->job, &pol, &j->work_err);
	if (j->work_rc < 0)
		return;
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
	if (j->work_rc == 0 && (j->job->flags & JOB_VERIFY))
		j->work_rc = store_track_crc(j->st);
	if (j->work_rc == 0 && (j->job->flags & JOB_SPARSE))
		store_keep_holes(j->st);
	j->t_setup1 = trace_now();
}
