/* SPDX-License-Identifier: MIT */
/*
 * probe - looking at a job's destinations without making anything
 * (dest.h): is everything there already (dest_probe), and would the job
 * be taken (dest_check, for a dry run)?
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dest/dest_int.h"

/* Entry e would be made in a directory that exists: may we write there? */
static int
check_writable(struct dest *d, const struct dent *e, struct rd_err *err)
{
	int fd = dest_dir_fd(d, e->root, e->dir);

	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", e->final, strerror(-fd));
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		return rd_errf(err, -errno, "cannot create %s: %s", e->final,
			       strerror(errno));
	return 0;
}

/* Free space below each root for the files that would land there. */
static int
check_space(struct dest *d, struct rd_err *err)
{
	uint64_t need;
	size_t r, i;
	int rc;

	for (r = 0; r < d->pol.nroots; r++) {
		need = 0;
		for (i = 0; i < d->n; i++)
			if (d->e[i].root == r && d->e[i].type == JF_FILE)
				need += d->job->files[i].size;
		rc = need > 0 && !d->pol.sparse ? dest_check_free(d->rootfd[r], need)
						: 0;
		if (rc != 0)
			return rd_errf(err, -rc, "%s: %s (%llu bytes needed)",
				       d->pol.roots[r], strerror(rc),
				       (unsigned long long)need);
	}
	return 0;
}

int
dest_check(const struct job *job, const struct dest_policy *pol,
	   struct rd_err *err)
{
	struct dest_policy look = *pol;
	struct dest *d;
	size_t i;
	int rc;

	look.state_dir = NULL;	/* nothing to record: nothing is made */
	rc = dest_alloc(job, &look, &d);
	if (rc < 0)
		return rc;
	d->committed = true;	/* nothing to remove */
	rc = dest_resolve(d, err);
	for (i = 0; i < d->n && rc == 0; i++)
		if (d->e[i].top)
			rc = check_writable(d, &d->e[i], err);
	if (rc == 0)
		rc = check_space(d, err);
	dest_free(d);
	return rc;
}

/* Every entry resolved is there as the job describes it: directories
 * merged, files and links present; *times when every file's time agrees
 * too. */
static bool
all_present(const struct dest *d, bool *times)
{
	size_t i;

	*times = d->times && !(d->job->flags & JOB_VERIFY);
	for (i = 0; i < d->n; i++) {
		if (d->e[i].type == JF_DIR ? !d->e[i].merged
					   : !d->e[i].present)
			return false;
		if (d->e[i].type == JF_FILE && !d->e[i].same_time)
			*times = false;
	}
	return true;
}

/* Open entry i, a present file, for reading, following no link. */
static int
open_present(struct dest *d, size_t i)
{
	struct dent *e = &d->e[i];
	int fd = dest_dir_fd(d, e->root, e->dir), file;

	if (fd < 0)
		return fd;
	file = openat(fd, e->base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return file < 0 ? -errno : file;
}

int
dest_probe(const struct job *job, const struct dest_policy *pol,
	   dest_file_fn file, void *ctx, bool *by_times)
{
	struct rd_err ignored = { 0 };
	struct dest *d;
	size_t i;
	int rc, fd;

	*by_times = false;
	rc = dest_alloc(job, pol, &d);
	if (rc < 0)
		return rc;
	d->probing = true;
	d->committed = true;	/* nothing to remove */
	if (dest_resolve(d, &ignored) < 0 || !all_present(d, by_times)) {
		dest_free(d);
		return 0;
	}
	rc = 1;
	for (i = 0; i < d->n && rc == 1 && !*by_times; i++) {
		if (d->e[i].type != JF_FILE)
			continue;
		fd = open_present(d, i);
		rc = fd < 0 ? 0 : file(ctx, i, fd) < 0 ? 0 : 1;
		if (fd >= 0)
			close(fd);
	}
	dest_free(d);
	return rc;
}
