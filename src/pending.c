/*
 * pending - records of temporaries, swept at start (see pending.h).
 */
#include "pending.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

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
	char *parent = path_parent(path), real[PATH_MAX];
	bool ok = false;
	size_t i;

	if (parent != NULL && realpath(parent, real) != NULL &&
	    strcmp(real, parent) == 0)	/* no link on the way */
		for (i = 0; i < n && !ok; i++)
			ok = path_under(roots[i], real);
	free(parent);
	return ok;
}

static int
remove_one(const char *path, const struct stat *sb, int type,
	   struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* Remove `path` and, if a directory, what it holds. */
static size_t
remove_tree(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) < 0)
		return 0;
	if (!S_ISDIR(sb.st_mode))
		return unlink(path) == 0;
	chmod(path, 0700);
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	return access(path, F_OK) != 0;
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
