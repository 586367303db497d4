/* SPDX-License-Identifier: MIT */
/*
 * probe - looking at a job's destinations without making anything
 * (dest.h): what stands where the entries land (dest_look), times set
 * where all is identical (dest_settle), and would the job
 * be taken (dest_check, for a dry run)?
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "dest/dest_int.h"

/* Entry e would be made in a directory that exists: may we write there? */
static int
check_writable(struct dest *d, const struct dent *e, struct rd_err *err)
{
	int fd = dest_dir_fd(d, e->root, e->dir);

	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", dest_upath(d, e), strerror(-fd));
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		return rd_errf(err, -errno, "cannot create %s: %s", dest_upath(d, e),
			       strerror(errno));
	return 0;
}

/* The file system of the directory where entry e would be made: a
 * directory that exists (its own parent's, or one the job merges into),
 * reached from e through the directories the job would make. */
static const struct dent *
on_disk_holder(const struct dest *d, const struct dent *e)
{
	while (e->parent >= 0 && !d->e[e->parent].merged)
		e = &d->e[e->parent];
	return e;
}

/* The bytes the job needs on one file system, and the entry it names. */
struct fs_need {
	dev_t dev;
	uint64_t need, avail;
	size_t first;		/* the first entry that lands there */
};

/* The space pol->freeable says a real run would free on `dev`. */
static uint64_t
freeable_on(const struct dest_policy *pol, dev_t dev)
{
	size_t i;

	for (i = 0; i < pol->nfreeable; i++)
		if (pol->freeable[i].dev == dev)
			return pol->freeable[i].bytes;
	return 0;
}

/* Add file entry i's bytes to its file system's need in *fs (*n of
 * them, grown as needed).  0 or -errno. */
static int
add_need(struct dest *d, size_t i, struct fs_need **fs, size_t *n)
{
	const struct dent *h = on_disk_holder(d, &d->e[i]);
	struct fs_need *grown;
	struct statvfs vfs;
	struct stat sb;
	int fd = dest_dir_fd(d, h->root, h->dir);
	size_t k;

	if (fd < 0)
		return fd;
	if (fstat(fd, &sb) < 0)
		return -errno;
	for (k = 0; k < *n && (*fs)[k].dev != sb.st_dev; k++)
		;
	if (k == *n) {
		if (fstatvfs(fd, &vfs) < 0)
			return -errno;
		grown = realloc(*fs, (*n + 1) * sizeof(**fs));
		if (grown == NULL)
			return -ENOMEM;
		*fs = grown;
		grown[(*n)++] = (struct fs_need){
			.dev = sb.st_dev, .first = i,
			.avail = (uint64_t)vfs.f_bavail * vfs.f_frsize +
				 freeable_on(&d->pol, sb.st_dev),
		};
	}
	(*fs)[k].need += d->job->files[i].size;
	return 0;
}

int
dest_check_space(struct dest *d, struct rd_err *err)
{
	struct fs_need *fs = NULL;
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; i < d->n && rc == 0 && !d->pol.sparse; i++)
		if (d->e[i].type == JF_FILE && d->job->files[i].size > 0)
			rc = add_need(d, i, &fs, &n);
	if (rc < 0)
		rd_errf(err, rc, "cannot tell the free space for %s: %s",
			d->job->files[i - 1].path, strerror(-rc));
	for (i = 0; i < n && rc == 0; i++)
		if (fs[i].need > fs[i].avail)
			rc = rd_errf(err, -ENOSPC, "%s: %s (the job needs %llu "
				     "bytes on its file system, %llu are free)",
				     d->job->files[fs[i].first].path,
				     strerror(ENOSPC),
				     (unsigned long long)fs[i].need,
				     (unsigned long long)fs[i].avail);
	free(fs);
	return rc;
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
		rc = dest_check_space(d, err);
	dest_free(d);
	return dest_access_hint(rc, err);
}

/* What stands at entry i, once resolved by a look (probing). */
static uint8_t
seen_at(const struct dent *e)
{
	if (e->type == JF_DIR)
		return e->merged ? DS_SAME : DS_MISSING;
	if (!e->exists)
		return DS_MISSING;
	if (!e->present)
		return e->type == JF_FILE && e->regular ? DS_OLD_FILE
							: DS_DIFFERENT;
	return e->type == JF_FILE ? DS_CANDIDATE : DS_SAME;
}

/* Open entry e, a file that is there, for reading, following no link. */
static int
open_present(struct dest *d, const struct dent *e)
{
	int fd = dest_dir_fd(d, e->root, e->dir), file;

	if (fd < 0)
		return fd;
	file = openat(fd, e->base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	return file < 0 ? -errno : file;
}

/* A dest that looks: resolved in probing mode, refusing nothing that
 * force could replace, making and recording nothing.  0 or -errno with
 * `err`; *out is freed by the caller in both cases. */
static int
look(const struct job *job, const struct dest_policy *pol, struct dest **out,
     struct rd_err *err)
{
	struct dest_policy p = *pol;
	int rc;

	p.seen = NULL;
	p.state_dir = NULL;
	*out = NULL;
	rc = dest_alloc(job, &p, out);
	if (rc < 0)
		return rc;
	(*out)->probing = true;
	(*out)->committed = true;	/* nothing to remove */
	return dest_resolve(*out, err);
}

int
dest_look(const struct job *job, const struct dest_policy *pol,
	  dest_file_fn file, void *ctx, uint8_t *seen, struct rd_err *err)
{
	struct dest *d;
	size_t i;
	int rc = look(job, pol, &d, err), fd;

	for (i = 0; rc == 0 && i < d->n; i++) {
		seen[i] = seen_at(&d->e[i]);
		if (seen[i] != DS_CANDIDATE)
			continue;
		fd = open_present(d, &d->e[i]);
		rc = fd < 0 ? fd : file(ctx, i, fd);
		if (fd >= 0)
			close(fd);
		if (rc < 0)
			rd_errf(err, rc, "cannot read %s: %s", job->files[i].path,
				strerror(-rc));
	}
	dest_free(d);
	return rc;
}

/* Open entry e for reading if it is a regular file (a FIFO put there
 * does not block us): the fd, or -errno (-ENOENT if gone, -EINVAL if no
 * longer a regular file). */
static int
open_regular(struct dest *d, const struct dent *e)
{
	int fd = dest_dir_fd(d, e->root, e->dir), file;
	struct stat sb;

	if (fd < 0)
		return fd;
	file = openat(fd, e->base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
				   O_CLOEXEC);
	if (file < 0)
		return -errno;
	if (fstat(file, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(file);
		return -EINVAL;
	}
	return file;
}

int
dest_bases(const struct job *job, const struct dest_policy *pol,
	   dest_file_fn file, void *ctx, struct rd_err *err)
{
	struct dest *d;
	size_t i;
	int rc = look(job, pol, &d, err), fd;

	for (i = 0; rc == 0 && i < d->n; i++) {
		if (d->e[i].type != JF_FILE || !d->e[i].regular)
			continue;
		fd = open_regular(d, &d->e[i]);
		if (fd == -ENOENT || fd == -EINVAL || fd == -ELOOP)
			continue;	/* changed since: no basis */
		rc = fd < 0 ? fd : file(ctx, i, fd);
		if (fd >= 0)
			close(fd);
		if (rc < 0)
			rd_errf(err, rc, "cannot read %s: %s", job->files[i].path,
				strerror(-rc));
	}
	dest_free(d);
	return rc;
}

/* File entry e, there and kept, gets its job's time: opened following
 * no link, and only if it is still a file of the job's size. */
static int
time_kept(struct dest *d, const struct dent *e, struct rd_err *err)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, e->mtime };
	const char *path = d->job->files[e - d->e].path;
	int fd = open_present(d, e), rc = 0;
	struct stat sb;

	if (fd < 0)
		return rd_errf(err, fd, "%s: %s", path, strerror(-fd));
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size != d->job->files[e - d->e].size)
		rc = rd_errf(err, -ESTALE, "%s changed as it was looked at",
			     path);
	else if (futimens(fd, ts) < 0)
		rc = rd_errf(err, -errno, "cannot set the time of %s: %s",
			     path, strerror(errno));
	close(fd);
	return rc;
}

int
dest_settle(const struct job *job, const struct dest_policy *pol,
	    struct rd_err *err)
{
	struct dest *d;
	size_t i;
	int rc = look(job, pol, &d, err);

	for (i = 0; rc == 0 && d->times && i < d->n; i++)
		if (d->e[i].type == JF_FILE && !d->e[i].same_time)
			rc = time_kept(d, &d->e[i], err);
	for (i = 0; rc == 0 && d->times && i < d->n; i++)
		if (d->e[i].merged)
			dest_time_merged(d, &d->e[i]);
	dest_free(d);
	return rc;
}
