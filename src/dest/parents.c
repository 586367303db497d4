/* SPDX-License-Identifier: MIT */
/*
 * parents - -d DIR/ makes DIR's missing parents as mkdir -p does (see
 * dest.h): they join the job as directories before DIR, so that the
 * whole new tree is made under one temporary name and appears at once,
 * or is removed, as any directory a job makes.
 */
#include "dest/dest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/path.h"

/* Is the sender's path p there on this daemon (below its prefix, if it
 * has one)?  Anything there counts, a link or a file too: what is wrong
 * with it is for dest_prepare to say.  So does a root, and anything not
 * below one, which is not looked at: it is no daemon's to make. */
static int
there(const struct dest_policy *pol, const char *p, bool *yes)
{
	char *lex = pol->prefix ? path_absolute(pol->prefix, p + 1)
				: strdup(p);
	struct stat sb;
	size_t i;

	if (lex == NULL)
		return -ENOMEM;
	*yes = true;
	for (i = 0; i < pol->nroots; i++)
		if (path_under(pol->roots[i], lex) &&
		    strcmp(pol->roots[i], lex) != 0)
			*yes = lstat(lex, &sb) == 0 || errno != ENOENT;
	free(lex);
	return 0;
}

/* The missing ancestors of the clean absolute path p, top first, into
 * *out (malloc'd, each malloc'd, the caller frees them even on failure):
 * *n of them.  0 or -ENOMEM. */
static int
missing_ancestors(const struct dest_policy *pol, const char *p, char ***out,
		  size_t *n)
{
	char *cur = path_parent(p), **grown;
	bool yes = false;
	int rc = -ENOMEM;

	*out = NULL;
	*n = 0;
	while (cur != NULL && strcmp(cur, "/") != 0) {
		if (there(pol, cur, &yes) < 0)
			goto out;
		if (yes)
			break;
		grown = realloc(*out, (*n + 1) * sizeof(*grown));
		if (grown == NULL)
			goto out;
		*out = grown;
		memmove(grown + 1, grown, *n * sizeof(*grown));
		grown[0] = cur;
		(*n)++;
		cur = path_parent(cur);
	}
	if (cur != NULL)
		rc = 0;
out:
	free(cur);
	return rc;
}

int
dest_add_parents(struct job *job, const struct dest_policy *pol,
		 struct rd_err *err)
{
	struct job_file *grown, *dir;
	char **miss = NULL;
	size_t i, n = 0;
	int rc;

	if (!(job->flags & JOB_PARENTS) || job->nfiles == 0 ||
	    job->files[0].type != JF_DIR)
		return 0;
	rc = missing_ancestors(pol, job->files[0].path, &miss, &n);
	if (rc == 0 && n > 0 && job->nfiles + n > PROTO_MAX_FILES)
		rc = rd_errf(err, -E2BIG, "%s: too many directories to make",
			     job->files[0].path);
	grown = rc == 0 && n > 0 ? realloc(job->files, (job->nfiles + n) *
					   sizeof(*grown)) : NULL;
	if (rc == 0 && n > 0 && grown == NULL)
		rc = -ENOMEM;
	if (rc == 0 && n > 0) {
		job->files = grown;
		memmove(grown + n, grown, job->nfiles * sizeof(*grown));
		dir = &grown[n];	/* DIR itself: its parents are as it */
		for (i = 0; i < n; i++) {
			grown[i] = *dir;
			grown[i].path = miss[i];
			miss[i] = NULL;
		}
		job->nfiles += (uint32_t)n;
	}
	for (i = 0; i < n; i++)
		free(miss[i]);
	free(miss);
	return rc;
}
