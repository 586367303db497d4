/*
 * dland - landing a job's entries (see dest.h): modes, times, renames
 * into place, and removing what was made when the job does not land.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dest_int.h"
#include "log.h"
#include "path.h"
#include "pending.h"

/* ---------------------------------------------------------------------
 * Landing
 */

static int
finish_entry(struct dest *d, struct dent *e, struct rd_err *err)
{
	struct timespec ts[2];
	int fd = dest_dir_fd(d, e->root, e->dir);

	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", e->final, strerror(-fd));
	if (e->type != JF_LINK && fchmodat(fd, e->name, e->mode, 0) < 0)
		return rd_errf(err, -errno, "cannot set the mode of %s: %s",
			       e->final, strerror(errno));
	if (!d->times)
		return 0;
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1] = e->mtime;
	if (utimensat(fd, e->name, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return rd_errf(err, -errno, "cannot set the time of %s: %s",
			       e->final, strerror(errno));
	return 0;
}

/* Rename e's temporary to its final name; never over a directory, and
 * over a file or link only with force. */
static int
place(struct dest *d, struct dent *e, struct rd_err *err)
{
	bool replace = d->pol.force && e->type != JF_DIR;
	int fd = dest_dir_fd(d, e->root, e->dir);

	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", e->final, strerror(-fd));
	if (renameat2(fd, e->name, fd, e->base,
		      replace ? 0 : RENAME_NOREPLACE) == 0)
		goto placed;
	/* no RENAME_NOREPLACE on this file system: link() never replaces */
	if (errno == EINVAL && !replace && e->type != JF_DIR &&
	    linkat(fd, e->name, fd, e->base, 0) == 0) {
		unlinkat(fd, e->name, 0);
		goto placed;
	}
	if (errno == EEXIST)
		return rd_errf(err, -EEXIST, "%s appeared during the transfer%s",
			       e->final, e->type == JF_DIR ? ""
				       : " (--force replaces it)");
	return rd_errf(err, -errno, "cannot rename %s into place: %s",
		       e->final, strerror(errno));
placed:
	e->placed = true;
	return 0;
}

/* With times, a directory that existed gets its source's time too, as
 * rsync -a gives it, once nothing more lands in it.  It is not ours: a
 * failure (not its owner) is logged, and the landed entries stay. */
static void
time_merged(struct dest *d, struct dent *e)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, e->mtime };
	int fd = dest_dir_fd(d, e->root, e->inside);

	if (fd < 0 || futimens(fd, ts) < 0)
		log_warn("cannot give the existing directory %s its source's "
			 "time: %s", e->final, strerror(fd < 0 ? -fd : errno));
}

int
dest_commit(struct dest *d, struct rd_err *err)
{
	size_t i;
	int rc = 0;

	/* files and links, then directories deepest first: what a directory
	 * holds is done before it may lose its write permission */
	for (i = 0; i < d->n && rc == 0; i++)
		if (d->e[i].made && d->e[i].type != JF_DIR)
			rc = finish_entry(d, &d->e[i], err);
	for (i = d->n; i > 0 && rc == 0; i--)
		if (d->e[i - 1].made && d->e[i - 1].type == JF_DIR)
			rc = finish_entry(d, &d->e[i - 1], err);
	for (i = 0; i < d->n && rc == 0; i++)
		if (d->e[i].top && !d->e[i].placed)
			rc = place(d, &d->e[i], err);
	for (i = 0; i < d->n && rc == 0 && d->times; i++)
		if (d->e[i].merged)
			time_merged(d, &d->e[i]);
	if (rc == 0) {
		d->committed = true;
		pending_done(d->record);
		d->record = NULL;
	}
	return rc;
}

/* Remove what this job made and did not place, children first. */
static void
remove_made(struct dest *d)
{
	struct dent *e;
	size_t i;
	int fd;

	for (i = 0; i < d->n; i++) {	/* undo modes a commit may have set */
		e = &d->e[i];
		if (e->parent >= 0 && d->e[e->parent].placed)
			e->placed = true;	/* moved with its directory */
		if (e->made && !e->placed && e->type == JF_DIR &&
		    (fd = dest_dir_fd(d, e->root, e->dir)) >= 0)
			fchmodat(fd, e->name, 0700, 0);
	}
	for (i = d->n; i > 0; i--) {
		e = &d->e[i - 1];
		if (!e->made || e->placed)
			continue;
		fd = dest_dir_fd(d, e->root, e->dir);
		if (fd < 0 || unlinkat(fd, e->name, e->type == JF_DIR
						   ? AT_REMOVEDIR : 0) < 0)
			log_warn("cannot remove %s/%s: %s", e->dir, e->name,
				 strerror(fd < 0 ? -fd : errno));
	}
}

void
dest_free(struct dest *d)
{
	size_t i;

	if (d == NULL)
		return;
	if (!d->committed)
		remove_made(d);
	pending_done(d->record);
	if (d->cache_fd >= 0)
		close(d->cache_fd);
	free(d->cache_dir);
	for (i = 0; i < d->n; i++) {
		free(d->e[i].lex);
		free(d->e[i].final);
		free(d->e[i].dir);
		free(d->e[i].inside);
		free(d->e[i].name);
	}
	for (i = 0; d->rootfd != NULL && i < d->pol.nroots; i++)
		if (d->rootfd[i] >= 0)
			close(d->rootfd[i]);
	free(d->rootfd);
	free(d->rootst);
	free(d->dirs);
	free(d->e);
	free(d);
}
