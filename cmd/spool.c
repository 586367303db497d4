/* SPDX-License-Identifier: MIT */
/*
 * '-' as a source: standard input, spooled to an unnamed temporary file
 * in $TMPDIR (default /tmp), then sent as a file.  Memory stays bounded
 * (one buffer); the disk there needs room for all of it.  The file has no
 * name (O_TMPFILE, else unlinked at once), so it goes when rdmcp exits,
 * however it exits; the push reads it through /proc/self/fd/N.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

#define SPOOL_BUF (1u << 20)

/* -EINVAL after saying what is wrong. */
static int
usage_error(const char *what)
{
	warnx_("%s", what);
	return -EINVAL;
}

/* $TMPDIR, else /tmp. */
static const char *
spool_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t != NULL && t[0] != '\0' ? t : "/tmp";
}

/* A new file in dir that has no name: a descriptor, or -errno. */
static int
nameless_file(const char *dir)
{
	char path[4096];
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
			errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	/* a file system without O_TMPFILE: a name, removed at once */
	if (snprintf(path, sizeof(path), "%s/rdmcp-stdin.XXXXXX", dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/* Copy all of in to out.  Returns 0 or -errno. */
static int
copy_all(int in, int out)
{
	char *buf = malloc(SPOOL_BUF);
	ssize_t n = 1, w, off;
	int rc = buf ? 0 : -ENOMEM;

	while (rc == 0 && n != 0) {
		n = read(in, buf, SPOOL_BUF);
		if (n < 0 && errno != EINTR)
			rc = -errno;
		for (off = 0; rc == 0 && n > 0 && off < n; off += w) {
			w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno != EINTR)
				rc = -errno;
			w = w < 0 ? 0 : w;
		}
	}
	free(buf);
	return rc;
}

/* The mode a file created now would get: 0666 less the umask. */
static mode_t
new_file_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

/* Does `name` end in '.' or '..' (".", "a/..."): a directory's name,
 * which the path made of it would resolve to, never a file's? */
static bool
names_a_directory(const char *name)
{
	const char *base = strrchr(name, '/');

	base = base != NULL ? base + 1 : name;
	return strcmp(base, ".") == 0 || strcmp(base, "..") == 0;
}

int
check_stdin_source(const struct opts *o, int nfiles)
{
	int i, n = 0;

	for (i = 0; i < nfiles; i++)
		n += strcmp(o->args[i], "-") == 0;
	if (n == 0 && o->name != NULL)
		return usage_error("--name NAME names what '-' (standard "
				   "input) lands as, and there is no '-'");
	if (n == 0)
		return 0;
	if (n > 1)
		return usage_error("'-' (standard input) may be given once");
	if (o->name == NULL || o->name[0] == '\0' ||
	    o->name[strlen(o->name) - 1] == '/')
		return usage_error("'-' (standard input) needs --name NAME, "
				   "the name it lands as");
	if (names_a_directory(o->name)) {
		warnx_("--name '%s' names a directory, not the file standard "
		       "input lands as: give that file's name (e.g. --name "
		       "data.tar)", o->name);
		return -EINVAL;
	}
	if (o->hostfile != NULL && strcmp(o->hostfile, "-") == 0)
		return usage_error("standard input cannot be both the hosts "
				   "(-f -) and a source (-)");
	if (isatty(STDIN_FILENO))
		return usage_error("'-' reads standard input, which is a "
				   "terminal: pipe the data in");
	return 0;
}

int
spool_stdin(char *path, size_t len, int *out)
{
	const char *dir = spool_dir();
	int fd = nameless_file(dir), rc = fd < 0 ? fd : 0;

	*out = -1;
	if (rc == 0)
		rc = copy_all(STDIN_FILENO, fd);
	if (rc == 0 && fchmod(fd, new_file_mode()) < 0)
		rc = -errno;
	if (rc == 0 && snprintf(path, len, "/proc/self/fd/%d", fd) >= (int)len)
		rc = -ENAMETOOLONG;
	if (rc < 0) {
		warnx_("cannot keep standard input in %s (TMPDIR): %s", dir,
		       strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc == -EINVAL ? -EIO : rc;
	}
	*out = fd;
	return 0;
}
