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
		return rd_errf(err, fd, "%s: %s", e->final, strerror(-fd));
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		return rd_errf(err, -errno, "cannot create %s: %s", e->final,
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
			.avail = (uint64_t)vfs.f_bavail * vfs.f_frsize,
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
