/* SPDX-License-Identifier: MIT */
/*
 * land - landing a job's entries (see dest.h): modes, times, renames
 * into place, and removing what was made when the job does not land.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dest/dest_int.h"
#include "util/log.h"
#include "util/path.h"
#include "dest/pending.h"

/* ---------------------------------------------------------------------
 * Landing
 */

/* Something else stands where entry e was made: someone who may write
 * that directory replaced it.  It is not touched, nor reported landed. */
static int
replaced(const struct dest *d, const struct dent *e, struct rd_err *err)
{
	log_warn("%s was replaced during the transfer by something this "
		 "daemon did not make: left alone", e->final);
	return rd_errf(err, -ESTALE, "%s was replaced during the transfer "
		       "(by a user who can write that directory?): not landed",
		       dest_upath(d, e));
}

static int
set_times(const struct dent *e, int fd, int holder)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, e->mtime };

	if (e->type != JF_LINK)
		return dest_time_made(fd, ts);
	/* a link's own times: by name, checked to be ours just before */
	return utimensat(holder, e->name, ts, AT_SYMLINK_NOFOLLOW) < 0
		       ? -errno : 0;
}

/* Entry e's mode and, with times, its time: on the entry made, never on
 * what its name may lead to. */
static int
finish_entry(struct dest *d, struct dent *e, struct rd_err *err)
{
	int holder, fd = dest_open_made(d, e, &holder), rc = 0;

	if (fd == -ESTALE)
		return replaced(d, e, err);
	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", dest_upath(d, e), strerror(-fd));
	if (e->type != JF_LINK && (rc = dest_chmod_made(fd, e->mode)) < 0)
		rd_errf(err, rc, "cannot set the mode of %s: %s", dest_upath(d, e),
			strerror(-rc));
	if (rc == 0 && d->times && (rc = set_times(e, fd, holder)) < 0)
		rd_errf(err, rc, "cannot set the time of %s: %s", dest_upath(d, e),
			strerror(-rc));
	close(fd);
	return rc;
}

/* Rename e's temporary to its final name; never over a directory, and
 * over a file or link only with force.  What the final name holds then
 * must be what was made. */
static int
place(struct dest *d, struct dent *e, struct rd_err *err)
{
	bool replace = d->pol.force && e->type != JF_DIR;
	int fd = dest_holder_fd(d, e), rc;

	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", dest_upath(d, e), strerror(-fd));
	rc = dest_is_made_at(e, fd, e->name);
	if (rc == -ESTALE)
		return replaced(d, e, err);
	if (rc < 0)
		return rd_errf(err, rc, "%s: %s", dest_upath(d, e), strerror(-rc));
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
			       dest_upath(d, e), e->type == JF_DIR ? ""
				       : " (--force replaces it)");
	return rd_errf(err, -errno, "cannot rename %s into place: %s",
		       dest_upath(d, e), strerror(errno));
placed:
	e->placed = true;	/* whatever it is, it is no longer ours */
	rc = dest_is_made_at(e, fd, e->base);
	return rc == 0 ? 0 : rc == -ESTALE ? replaced(d, e, err)
		: rd_errf(err, rc, "%s: %s", dest_upath(d, e), strerror(-rc));
}

void
dest_time_merged(struct dest *d, const struct dent *e)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, e->mtime };
	int fd = dest_dir_fd(d, e->root, e->inside);

	if (fd < 0 || futimens(fd, ts) < 0)
		log_warn("cannot give the existing directory %s its source's "
			 "time: %s", e->final, strerror(fd < 0 ? -fd : errno));
}

static void remove_one(struct dest *d, const struct dent *e);

/* A file found identical and kept: its temporary, which only carried its
 * bytes, goes, and with times the file kept gets the job's.  Should the
 * file have gone meanwhile (or be no file of its size now), the
 * temporary, which holds the source's bytes, lands in its place. */
static int
keep_file(struct dest *d, struct dent *e, struct rd_err *err)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, e->mtime };
	int holder = dest_holder_fd(d, e), fd, rc;
	struct stat sb;

	if (holder < 0)
		return rd_errf(err, holder, "%s: %s", dest_upath(d, e),
			       strerror(-holder));
	fd = openat(holder, e->base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size != d->job->files[e - d->e].size) {
		if (fd >= 0)
			close(fd);
		e->keep = false;
		rc = finish_entry(d, e, err);
		return rc < 0 ? rc : place(d, e, err);
	}
	remove_one(d, e);
	e->made = false;	/* nothing of ours is left there */
	if (d->times && futimens(fd, ts) < 0)
		log_warn("cannot give %s, kept, its source's time: %s",
			 e->final, strerror(errno));
	close(fd);
	return 0;
}

int
dest_commit(struct dest *d, struct rd_err *err)
{
	size_t i;
	int rc = 0;

	/* files and links, then directories deepest first: what a directory
	 * holds is done before it may lose its write permission */
	for (i = 0; i < d->n && rc == 0; i++)
		if (d->e[i].made && d->e[i].type != JF_DIR && !d->e[i].keep)
			rc = finish_entry(d, &d->e[i], err);
	for (i = d->n; i > 0 && rc == 0; i--)
		if (d->e[i - 1].made && d->e[i - 1].type == JF_DIR)
			rc = finish_entry(d, &d->e[i - 1], err);
	for (i = 0; i < d->n && rc == 0; i++)
		if (d->e[i].keep && d->e[i].made)
			rc = keep_file(d, &d->e[i], err);
		else if (d->e[i].top && !d->e[i].placed && !d->e[i].keep)
			rc = place(d, &d->e[i], err);
	for (i = 0; i < d->n && rc == 0 && d->times; i++)
		if (d->e[i].merged)
			dest_time_merged(d, &d->e[i]);
	if (rc == 0) {
		d->committed = true;
		pending_done(d->record);
		d->record = NULL;
	}
	return rc;
}

/* A directory this job made and did not place gets 0700 again, so that
 * what is in it can be removed, if it is still the one made. */
static void
open_up(struct dest *d, const struct dent *e)
{
	int holder, fd = dest_open_made(d, e, &holder), rc;

	if (fd < 0)
		return;	/* remove_one says why */
	rc = dest_chmod_made(fd, 0700);
	if (rc < 0)
		log_warn("cannot make %s writable to remove it: %s", e->final,
			 strerror(-rc));
	close(fd);
}

/* Remove entry e, made and not placed, if it is still the one made. */
static void
remove_one(struct dest *d, const struct dent *e)
{
	int fd = dest_holder_fd(d, e), rc;

	rc = fd < 0 ? fd : dest_is_made_at(e, fd, e->name);
	if (rc == 0 && unlinkat(fd, e->name, e->type == JF_DIR
						? AT_REMOVEDIR : 0) < 0)
		rc = -errno;
	if (rc == -ESTALE)
		log_warn("not removing %s/%s: it was replaced by something "
			 "this daemon did not make", e->dir, e->name);
	else if (rc < 0)
		log_warn("cannot remove %s/%s: %s", e->dir, e->name,
			 strerror(-rc));
}

/* Remove what this job made and did not place, children first. */
static void
remove_made(struct dest *d)
{
	struct dent *e;
	size_t i;

	for (i = 0; i < d->n; i++) {	/* undo modes a commit may have set */
		e = &d->e[i];
		if (e->parent >= 0 && d->e[e->parent].placed)
			e->placed = true;	/* moved with its directory */
		if (e->made && !e->placed && e->type == JF_DIR)
			open_up(d, e);
	}
	for (i = d->n; i > 0; i--) {
		e = &d->e[i - 1];
		if (e->made && !e->placed)
			remove_one(d, e);
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
	if (d->made_fd >= 0)
		close(d->made_fd);
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
