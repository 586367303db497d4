/* SPDX-License-Identifier: MIT */
/*
 * made - acting on what a job made, and on nothing else (see dest_int.h).
 *
 * A job's temporaries live in directories that others may write: a user
 * who can write the destination directory may rename, remove or replace
 * an entry between two calls of ours, e.g. put a symbolic link to a file
 * of root's where a temporary was.  So every entry is known by its
 * identity (device and inode), taken when it is made, and every later
 * step opens it without following a link (O_PATH | O_NOFOLLOW), checks it
 * is still that entry, and then acts on the descriptor: modes and times
 * through /proc/self/fd (the kernel's way to act on an O_PATH descriptor,
 * as glibc's fchmodat(AT_SYMLINK_NOFOLLOW) does), owners with
 * fchownat(AT_EMPTY_PATH).  A directory the job made is reached the same
 * way, one checked component at a time, never through a link.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dest/dest_int.h"

static bool
is_made(const struct dent *e, const struct stat *sb)
{
	return sb->st_dev == e->dev && sb->st_ino == e->ino;
}

static bool
has_type(uint8_t type, mode_t mode)
{
	return type == JF_DIR ? S_ISDIR(mode)
	       : type == JF_LINK ? S_ISLNK(mode) : S_ISREG(mode);
}

int
dest_note_made(struct dent *e, int holder, int file)
{
	struct stat sb;
	int fd = file, rc;

	if (fd < 0)
		fd = openat(holder, e->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = fstat(fd, &sb) < 0 ? -errno : 0;
	if (rc == 0 && !has_type(e->type, sb.st_mode))
		rc = -ESTALE;	/* replaced as soon as it was made */
	if (rc == 0) {
		e->dev = sb.st_dev;
		e->ino = sb.st_ino;
	}
	if (fd != file)
		close(fd);
	return rc;
}

/* Open `name` in `holder` without following a link, and check that it is
 * entry e as made: a new O_PATH descriptor, -ESTALE if something else
 * stands there now, or -errno. */
static int
open_as_made(const struct dent *e, int holder, const char *name, int flags)
{
	struct stat sb;
	int fd = openat(holder, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | flags);

	if (fd < 0)
		return errno == ELOOP || errno == ENOTDIR ? -ESTALE : -errno;
	if (fstat(fd, &sb) < 0 || !is_made(e, &sb)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* Directory entry p, which this job made, checked and cached. */
static int
made_dir_fd(struct dest *d, long p)
{
	const struct dent *pe = &d->e[p];
	int hold, fd;

	if (d->made_fd >= 0 && d->made_ent == p)
		return d->made_fd;
	hold = dest_holder_fd(d, pe);
	if (hold < 0)
		return hold;
	fd = open_as_made(pe, hold, pe->name, O_DIRECTORY);
	if (fd < 0)
		return fd;
	if (d->made_fd >= 0)	/* after its last use: it may be `hold` */
		close(d->made_fd);
	d->made_fd = fd;
	d->made_ent = p;
	return fd;
}

int
dest_holder_fd(struct dest *d, const struct dent *e)
{
	if (e->parent < 0 || d->e[e->parent].merged)
		return dest_dir_fd(d, e->root, e->dir);
	return made_dir_fd(d, e->parent);
}

int
dest_open_made(struct dest *d, const struct dent *e, int *holder)
{
	*holder = dest_holder_fd(d, e);
	if (*holder < 0)
		return *holder;
	return open_as_made(e, *holder, e->name, 0);
}

int
dest_is_made_at(const struct dent *e, int holder, const char *name)
{
	int fd = open_as_made(e, holder, name, 0);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* "/proc/self/fd/N": acting on it acts on exactly what fd refers to. */
static void
fd_path(char buf[32], int fd)
{
	snprintf(buf, 32, "/proc/self/fd/%d", fd);
}

int
dest_chmod_made(int fd, mode_t mode)
{
	char path[32];

	fd_path(path, fd);
	return fchmodat(AT_FDCWD, path, mode, 0) < 0 ? -errno : 0;
}

int
dest_time_made(int fd, const struct timespec ts[2])
{
	char path[32];

	fd_path(path, fd);
	return utimensat(AT_FDCWD, path, ts, 0) < 0 ? -errno : 0;
}

int
dest_chown_made(int fd, uid_t uid, gid_t gid)
{
	return fchownat(fd, "", uid, gid, AT_EMPTY_PATH) < 0 ? -errno : 0;
}
