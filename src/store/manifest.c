/* SPDX-License-Identifier: MIT */
/*
 * manifest - files, directories and links to send (see manifest.h).
 */
#include "store/manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/path.h"

struct manifest {
	struct job_file *e;
	char **src;
	size_t n, cap;
};

struct manifest *
mf_new(void)
{
	return calloc(1, sizeof(struct manifest));
}

static int
grow(struct manifest *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct job_file *e;
	char **src;

	if (m->n < m->cap)
		return 0;
	if (m->n >= PROTO_MAX_FILES)
		return -E2BIG;
	e = realloc(m->e, cap * sizeof(*e));
	if (e == NULL)
		return -ENOMEM;
	m->e = e;
	src = realloc(m->src, cap * sizeof(*src));
	if (src == NULL)
		return -ENOMEM;
	m->src = src;
	m->cap = cap;
	return 0;
}

/* Append an entry for `dest` described by `sb` (src: the local file). */
static int
append(struct manifest *m, const char *src, const char *dest,
       const struct stat *sb, const char *target)
{
	struct job_file *f;
	int rc = grow(m);

	if (rc < 0)
		return rc;
	f = &m->e[m->n];
	memset(f, 0, sizeof(*f));
	m->src[m->n] = NULL;
	f->path = strdup(dest);
	f->mode = sb->st_mode & 07777;
	f->mtime_sec = sb->st_mtim.tv_sec;
	f->mtime_nsec = (uint32_t)sb->st_mtim.tv_nsec;
	f->uid = sb->st_uid;
	f->gid = sb->st_gid;
	if (S_ISDIR(sb->st_mode)) {
		f->type = JF_DIR;
	} else if (S_ISLNK(sb->st_mode)) {
		f->type = JF_LINK;
		f->target = strdup(target);
	} else {
		f->size = (uint64_t)sb->st_size;
		m->src[m->n] = strdup(src);
	}
	m->n++;		/* counted even if half made, so mf_free frees it */
	if (f->path == NULL || (f->type == JF_LINK && f->target == NULL) ||
	    (f->type == JF_FILE && m->src[m->n - 1] == NULL))
		return -ENOMEM;
	return 0;
}

int
mf_add_dir(struct manifest *m, const char *dest, uint32_t mode)
{
	struct stat sb;
	int rc;

	memset(&sb, 0, sizeof(sb));
	sb.st_mode = S_IFDIR | (mode & 07777);
	clock_gettime(CLOCK_REALTIME, &sb.st_mtim);	/* -p: now, not 1970 */
	sb.st_uid = getuid();
	sb.st_gid = getgid();
	rc = append(m, NULL, dest, &sb, NULL);
	if (rc == 0)
		m->e[m->n - 1].place = true;	/* no copy: followed if a link */
	return rc;
}

static int walk(struct manifest *m, const char *src, const char *dest,
		struct rd_err *err, int depth);

static int
add_link(struct manifest *m, const char *src, const char *dest,
	 const struct stat *sb, struct rd_err *err)
{
	char target[PATH_MAX];
	ssize_t len = readlink(src, target, sizeof(target) - 1);

	if (len < 0)
		return rd_errf(err, -errno, "cannot read link %s: %s", src,
			       strerror(errno));
	target[len] = '\0';
	return append(m, src, dest, sb, target);
}

/* Add what `src` is (lstat'ed into sb), recursing into directories. */
static int
add_node(struct manifest *m, const char *src, const char *dest,
	 const struct stat *sb, struct rd_err *err, int depth)
{
	if (S_ISREG(sb->st_mode))
		return append(m, src, dest, sb, NULL);
	if (S_ISLNK(sb->st_mode))
		return add_link(m, src, dest, sb, err);
	if (S_ISDIR(sb->st_mode)) {
		int rc = append(m, src, dest, sb, NULL);

		return rc < 0 ? rc : walk(m, src, dest, err, depth + 1);
	}
	return rd_errf(err, -EINVAL, "%s is %s; rdmcp copies only files, "
		       "directories and symbolic links", src,
		       path_kind(sb->st_mode));
}

static int
cmp_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int
skip_dots(const struct dirent *d)
{
	return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
}

/* Add child `name` of directory src (landing in dest). */
static int
add_child(struct manifest *m, const char *src, const char *dest,
	  const char *name, struct rd_err *err, int depth)
{
	char *s = path_join(src, name), *d = path_join(dest, name);
	struct stat sb;
	int rc = -ENOMEM;

	if (s != NULL && d != NULL) {
		if (strlen(d) >= PROTO_MAX_PATH)
			rc = rd_errf(err, -ENAMETOOLONG, "%s: destination "
				     "path too long", s);
		else if (lstat(s, &sb) < 0)
			rc = rd_errf(err, -errno, "%s: %s", s, strerror(errno));
		else
			rc = add_node(m, s, d, &sb, err, depth);
	}
	free(s);
	free(d);
	return rc;
}

/* Every entry of directory src, in name order. */
static int
walk(struct manifest *m, const char *src, const char *dest,
     struct rd_err *err, int depth)
{
	struct dirent **names = NULL;
	int n, i, rc = 0;

	if (depth > PATH_MAX / 2)
		return rd_errf(err, -ELOOP, "%s: too deep", src);
	n = scandir(src, &names, skip_dots, cmp_names);
	if (n < 0)
		return rd_errf(err, -errno, "cannot read directory %s: %s",
			       src, strerror(errno));
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = add_child(m, src, dest, names[i]->d_name, err,
				       depth);
		free(names[i]);
	}
	free(names);
	return rc;
}

int
mf_add(struct manifest *m, const char *src, const char *dest,
       bool recursive, struct rd_err *err)
{
	struct stat sb;
	int rc;

	if (stat(src, &sb) < 0)
		return rd_errf(err, -errno, "cannot open %s: %s", src,
			       strerror(errno));
	if (S_ISDIR(sb.st_mode) && !recursive)
		return rd_errf(err, -EISDIR, "%s is a directory (-r copies "
			       "directories)", src);
	rc = add_node(m, src, dest, &sb, err, 0);
	if (rc == -E2BIG)
		rd_errf(err, rc, "more than %u files, directories and links in "
			"one transfer", PROTO_MAX_FILES);
	else if (rc == -ENOMEM && err != NULL && err->code == 0)
		rd_errf(err, rc, "out of memory");
	return rc;
}

size_t
mf_count(const struct manifest *m)
{
	return m->n;
}

const struct job_file *
mf_entries(const struct manifest *m)
{
	return m->e;
}

const char *const *
mf_sources(const struct manifest *m)
{
	return (const char *const *)m->src;
}

void
mf_free(struct manifest *m)
{
	size_t i;

	if (m == NULL)
		return;
	for (i = 0; i < m->n; i++) {
		free(m->e[i].path);
		free(m->e[i].target);
		free(m->src[i]);
	}
	free(m->e);
	free(m->src);
	free(m);
}
