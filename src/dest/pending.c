/* SPDX-License-Identifier: MIT */
/*
 * pending - records of temporaries, swept at start (see pending.h).
 */
#include "dest/pending.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/path.h"

struct pending {
	int fd;
	char *path;
};

int
pending_open(const char *dir, const uint8_t *token, size_t len,
	     struct pending **out)
{
	struct pending *p = calloc(1, sizeof(*p));
	char name[80] = "job-";
	size_t i;

	*out = NULL;
	if (p == NULL)
		return -ENOMEM;
	for (i = 0; i < len && i < 32; i++)
		snprintf(name + 4 + 2 * i, 3, "%02x", token[i]);
	p->path = path_join(dir, name);
	if (p->path == NULL) {
		free(p);
		return -ENOMEM;
	}
	p->fd = open(p->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC,
		     0600);
	/* locked while the job runs: another daemon sharing the directory
	 * sweeps only the records of the dead */
	if (p->fd >= 0 && flock(p->fd, LOCK_EX | LOCK_NB) < 0) {
		close(p->fd);
		p->fd = -1;
	}
	if (p->fd < 0) {
		int rc = -errno;

		free(p->path);
		free(p);
		return rc;
	}
	*out = p;
	return 0;
}

int
pending_add(struct pending *p, const char *path)
{
	size_t len = strlen(path);
	char *line = malloc(len + 2);
	ssize_t n;

	if (line == NULL)
		return -ENOMEM;
	memcpy(line, path, len);
	line[len] = '\n';
	n = write(p->fd, line, len + 1);	/* O_APPEND: one piece */
	free(line);
	return n == (ssize_t)(len + 1) ? 0 : n < 0 ? -errno : -EIO;
}

void
pending_done(struct pending *p)
{
	if (p == NULL)
		return;
	unlink(p->path);	/* while it is still locked */
	close(p->fd);
	free(p->path);
	free(p);
}

/* ---------------------------------------------------------------------
 * Sweeping
 */

/* ".NAME.rdmcp-XXXXXXXX", as dest.c names its temporaries. */
static bool
looks_temporary(const char *path)
{
	const char *base = path_base(path), *tag = strstr(base, ".rdmcp-");
	size_t i;

	if (base[0] != '.' || tag == NULL || tag == base || strlen(tag) != 15)
		return false;
	for (i = 7; i < 15; i++)
		if (!strchr("0123456789abcdef", tag[i]))
			return false;
	return true;
}

static bool
below_roots(const char *path, const char *const *roots, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (path_under(roots[i], path) && strcmp(roots[i], path) != 0)
			return true;
	return false;
}

/* The directory `dir` (clean, absolute), opened one component at a time
 * following no link: a descriptor, or -errno (-ELOOP, -ENOTDIR: a link
 * or something else on the way). */
static int
open_dir_nofollow(const char *dir)
{
	char buf[PATH_MAX], *save = NULL, *comp;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), next;

	if (fd < 0)
		return -errno;
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf)) {
		close(fd);
		return -ENAMETOOLONG;
	}
	for (comp = strtok_r(buf, "/", &save); comp != NULL;
	     comp = strtok_r(NULL, "/", &save)) {
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -errno;
		fd = next;
	}
	return fd;
}

/* Deeper than this, a tree is left (each level holds a descriptor). */
#define SWEEP_MAX_DEPTH 256

static bool remove_at(int dirfd, const char *name, dev_t dev,
		      unsigned depth);

/* Empty directory `name` of `dirfd` (on device dev): what is in it,
 * reached through no link, never crossing into another file system. */
static void
empty_dir_at(int dirfd, const char *name, dev_t dev, unsigned depth)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	fchmod(fd, 0700);	/* on the directory opened, not a name */
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			remove_at(fd, de->d_name, dev, depth + 1);
	closedir(d);
}

/* Remove `name` of `dirfd` and, if a directory, what it holds, following
 * no link; true if it is gone. */
static bool
remove_at(int dirfd, const char *name, dev_t dev, unsigned depth)
{
	struct stat sb;
	bool dir;

	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0 ||
	    (depth > 0 && sb.st_dev != dev))
		return false;
	dir = S_ISDIR(sb.st_mode);
	if (dir && depth < SWEEP_MAX_DEPTH)
		empty_dir_at(dirfd, name, sb.st_dev, depth);
	return unlinkat(dirfd, name, dir ? AT_REMOVEDIR : 0) == 0;
}

/* Remove temporary `path` and, if a directory, what it holds. */
static size_t
remove_tree(const char *path)
{
	char *parent = path_parent(path);
	int fd = parent != NULL ? open_dir_nofollow(parent) : -ENOMEM;
	bool gone = fd >= 0 && remove_at(fd, path_base(path), 0, 0);

	if (fd >= 0)
		close(fd);
	free(parent);
	return gone;
}

/* Sweep one record unless its job still runs (it holds the lock); true
 * if it was swept. */
static bool
sweep_record(const char *record, const char *const *roots, size_t nroots,
	     size_t *removed)
{
	FILE *in = fopen(record, "re");
	char *line = NULL;
	size_t cap = 0;

	if (in == NULL)
		return false;
	if (flock(fileno(in), LOCK_EX | LOCK_NB) < 0) {
		fclose(in);
		return false;
	}
	while (getline(&line, &cap, in) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (path_is_clean(line) && looks_temporary(line) &&
		    below_roots(line, roots, nroots))
			*removed += remove_tree(line);
	}
	free(line);
	unlink(record);		/* before the lock goes */
	fclose(in);
	return true;
}

int
pending_sweep(const char *dir, const char *const *roots, size_t nroots,
	      size_t *removed)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *record;

	*removed = 0;
	if (d == NULL)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "job-", 4) != 0)
			continue;
		record = path_join(dir, de->d_name);
		if (record == NULL)
			break;
		sweep_record(record, roots, nroots, removed);
		free(record);
	}
	closedir(d);
	return 0;
}

/* Make `dir` if missing; with `own`, what is there must be the daemon's
 * own directory (see pending_start).  0 or -errno. */
static int
state_dir_ready(const char *dir, bool own)
{
	struct stat sb;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (!own)
		return 0;
	if (lstat(dir, &sb) < 0)
		return -errno;
	if (!S_ISDIR(sb.st_mode))
		return -ENOTDIR;	/* a link, or a file */
	return sb.st_uid == geteuid() && (sb.st_mode & 022) == 0 ? 0
								 : -EPERM;
}

int
pending_start(const char *dir, bool own, const char *const *roots,
	      size_t nroots, char **real)
{
	size_t removed = 0;
	int rc = state_dir_ready(dir, own);

	*real = NULL;
	if (rc == 0 && (*real = realpath(dir, NULL)) == NULL)
		rc = -errno;
	if (rc == 0)
		rc = pending_sweep(*real, roots, nroots, &removed);
	if (rc < 0) {
		log_warn("state directory %s: %s%s; temporaries of jobs cut "
			 "short by a crash will not be removed", dir,
			 strerror(-rc), rc == -EPERM || rc == -ENOTDIR
			 ? " (not a directory of this daemon's user alone)"
			 : "");
		free(*real);
		*real = NULL;
		return rc;
	}
	if (removed > 0)
		log_info("removed %zu temporaries left by jobs a previous run "
			 "did not finish", removed);
	return 0;
}
