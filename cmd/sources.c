/* SPDX-License-Identifier: MIT */
/*
 * Where each source of a push lands (its path, or -d DIR), the manifest
 * of what is sent: files, trees (-r), libraries (--send-libs), and the
 * directories it lands in (the --rsh receivers' roots).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "util/log.h"
#include "store/manifest.h"
#include "util/path.h"

/* Where source `src` lands: its own absolute path (made clean: "tree/",
 * "." and "a/.." name the directory itself), or with -d DIR, DIR/ the
 * base name of that path; into *out (malloc'd).  Returns 0 or -errno
 * after a message (-EINVAL: it would land on "/"). */
static int
destination(const struct opts *o, const char *cwd, const char *src,
	    char **out)
{
	char *abs, *dir, *in_dir = NULL;

	abs = path_absolute(cwd, strcmp(src, "-") == 0 ? o->name : src);

	if (abs != NULL && o->dest_dir != NULL && strcmp(abs, "/") != 0) {
		dir = path_absolute("/", o->dest_dir);
		in_dir = dir ? path_join(dir, path_base(abs)) : NULL;
		free(dir);
		free(abs);
		abs = in_dir;
	}
	*out = abs;
	if (abs == NULL) {
		warnx_("no destination for '%s': out of memory", src);
		return -ENOMEM;
	}
	if (strcmp(abs, "/") == 0) {
		warnx_("no destination for '%s'", src);
		return -EINVAL;
	}
	return 0;
}

/* Two sources may not land on one name: -EINVAL after a message if the
 * last of dests[0..n) is one of the others. */
static int
lands_twice(char **dests, size_t n, char **sources)
{
	size_t j;

	for (j = 0; j + 1 < n; j++)
		if (strcmp(dests[j], dests[n - 1]) == 0) {
			warnx_("'%s' and '%s' would both land on %s",
			       sources[j], sources[n - 1], dests[j]);
			return -EINVAL;
		}
	return 0;
}

/* Where each of the n sources lands, into dests[0..n) (malloc'd, freed by
 * the caller).  Returns 0, or -errno after a message: -EINVAL for a
 * mistake on the command line (-d not absolute, two sources on one
 * name). */
int
destinations(const struct opts *o, char **sources, size_t n, char **dests)
{
	char cwd[4096];
	size_t i;
	int rc;

	if (o->dest_dir != NULL && o->dest_dir[0] != '/') {
		warnx_("destination directory '%s' must be absolute",
		       o->dest_dir);
		return -EINVAL;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		rc = -errno;
		warnx_("cannot start: the current directory: %s",
		       strerror(-rc));
		return rc;
	}
	for (i = 0, rc = 0; i < n && rc == 0; i++) {
		rc = destination(o, cwd, sources[i], &dests[i]);
		if (rc == 0)
			rc = lands_twice(dests, i + 1, sources);
	}
	return rc;
}

bool
dest_dir_made(const struct opts *o)
{
	size_t len = o->dest_dir ? strlen(o->dest_dir) : 0;

	return len >= 2 && o->dest_dir[len - 1] == '/';
}

/* -d DIR/ (a trailing slash): DIR is made where it is missing, the first
 * entry (the daemons make its missing parents: JOB_PARENTS).  Returns 0
 * or -errno after a message. */
static int
add_dest_dir(const struct opts *o, struct manifest *m)
{
	char *dir;
	int rc;

	if (!dest_dir_made(o))
		return 0;
	dir = path_absolute("/", o->dest_dir);
	rc = dir ? mf_add_dir(m, dir, 0755) : -ENOMEM;
	if (rc < 0)
		warnx_("-d %s: %s", o->dest_dir, strerror(-rc));
	free(dir);
	return rc;
}

/* The manifest of the sources, landing at dests: -d DIR/, every file,
 * with -r every tree, with --send-libs the libraries.  Returns 0, or
 * -errno after a message (a source that cannot be read...). */
int
build_manifest(const struct opts *o, char **sources, char **dests, size_t n,
	       struct manifest **out)
{
	struct manifest *m = mf_new();
	struct rd_err err = { 0 };
	size_t i;
	int rc = -ENOMEM;

	*out = NULL;
	if (m == NULL) {
		warnx_("cannot start: out of memory");
		goto out;
	}
	rc = add_dest_dir(o, m);
	for (i = 0; rc == 0 && i < n; i++) {
		rc = mf_add(m, sources[i], dests[i], o->recursive, &err);
		if (rc < 0)
			warnx_("%s", err.code != 0 ? err.msg : strerror(-rc));
		else if (o->send_libs && strcmp(o->args[i], "-") != 0)
			rc = add_libs(m, sources[i], dests[i]);
	}
	if (rc == 0) {
		*out = m;
		m = NULL;
	}
out:
	mf_free(m);
	return rc;
}

uint64_t
manifest_bytes(const struct manifest *mf, size_t *nfiles)
{
	const struct job_file *e = mf_entries(mf);
	size_t i, n = mf_count(mf), files = 0;
	uint64_t bytes = 0;

	for (i = 0; i < n; i++)
		if (e[i].type == JF_FILE) {
			files++;
			bytes += e[i].size;
		}
	if (nfiles != NULL)
		*nfiles = files;
	return bytes;
}

static int
cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The manifest's directories, sorted (pointers into it), or NULL. */
static const char **
sorted_dirs(const struct job_file *e, size_t n, size_t *ndirs)
{
	const char **dirs = malloc((n ? n : 1) * sizeof(*dirs));
	size_t i;

	*ndirs = 0;
	for (i = 0; dirs != NULL && i < n; i++)
		if (e[i].type == JF_DIR)
			dirs[(*ndirs)++] = e[i].path;
	if (dirs != NULL)
		qsort(dirs, *ndirs, sizeof(*dirs), cmp_strp);
	return dirs;
}

char **
landing_dirs(const struct manifest *m, size_t *ndirs)
{
	const struct job_file *e = mf_entries(m);
	size_t i, j, n = mf_count(m), nin;
	const char **in = sorted_dirs(e, n, &nin);
	char **dirs = calloc(n ? n : 1, sizeof(*dirs)), *d;

	*ndirs = 0;
	if (in == NULL) {
		free(dirs);
		return NULL;
	}
	for (i = 0; dirs != NULL && i < n; i++) {
		d = path_parent(e[i].path);
		if (d != NULL && bsearch(&d, in, nin, sizeof(*in), cmp_strp)) {
			free(d);	/* inside the manifest */
			continue;
		}
		for (j = 0; d != NULL && j < *ndirs; j++)
			if (strcmp(dirs[j], d) == 0)
				break;
		if (d != NULL && j == *ndirs)
			dirs[(*ndirs)++] = d;
		else
			free(d);
	}
	free(in);
	return dirs;
}
